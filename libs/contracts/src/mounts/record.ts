import { z } from 'zod';
import { Timestamp } from '../primitives.js';

export const MountType = z.enum(['volume', 'bind', 'file']).describe(
  '`volume`: a named volume, kept across redeploys; `bind`: a host path (only where the server trusts the organization); ' +
    '`file`: text the server\'s agent writes under the application\'s folder and mounts read-only',
);

/** A path in the container: absolute, no `.` or `..` segment, not `/` itself. */
export const MountPath = z
  .string()
  .min(2)
  .max(4096)
  .refine((p) => p.startsWith('/') && !/[\0\n]/.test(p) && normalSegments(p.slice(1)), 'an absolute path without `.` or `..` segments, not `/`');

/** A host path: absolute, no `.` or `..` segment. */
export const HostPath = z
  .string()
  .min(2)
  .max(4096)
  .refine((p) => p.startsWith('/') && !/[\0\n:]/.test(p) && normalSegments(p.slice(1)), 'an absolute path without `.` or `..` segments or `:`');

/** A file mount's place under the application's folder on the server: relative, no `.` or `..` segment. */
export const FilePath = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith('/') && !/[\0\n\\]/.test(p) && normalSegments(p), 'a relative path without `.` or `..` segments or `\\`');

/** Docker's rule for volume names. */
export const VolumeName = z
  .string()
  .min(2)
  .max(255)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, 'letters, digits, `_`, `.` and `-`, starting with a letter or digit');

/** Every `/`-separated segment is non-empty and neither `.` nor `..`. */
function normalSegments(path: string): boolean {
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** Up to 1 MiB of text. */
export const FileContent = z.string().max(1024 * 1024);

export const MountRecord = z.object({
  mountId: z.string(),
  applicationId: z.string(),
  type: MountType,
  volumeName: z.string().nullable(),
  hostPath: z.string().nullable(),
  filePath: z.string().nullable(),
  content: z.string().nullable().describe('A file mount\'s text; null when `secret` (write-only) and for other types'),
  secret: z.boolean().describe('The content is sealed at rest and never answered'),
  hasContent: z.boolean().describe('A file mount with text (true for secret ones too)'),
  mountPath: z.string(),
  createdAt: Timestamp,
});
