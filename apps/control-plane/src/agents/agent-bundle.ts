import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

export interface BundleFile {
  path: string;
  /** Lowercase hex. */
  sha256: string;
  size: number;
}

/**
 * The agent program the control plane offers to agents (settings.updateServer, served by
 * AgentArtifacts.FetchAgentBundle): the file `SKIFF_AGENT_BUNDLE` names, by default the
 * `dist/agent/main.mjs` tools/up builds. Read anew at each call, so a program built after the
 * start is the one offered.
 */
export class AgentBundle {
  constructor(private readonly path: string | undefined) {}

  async current(): Promise<BundleFile | null> {
    if (!this.path) return null;
    try {
      const info = await stat(this.path);
      if (!info.isFile()) return null;
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(this.path)) hash.update(chunk as Buffer);
      return { path: this.path, sha256: hash.digest('hex'), size: info.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
