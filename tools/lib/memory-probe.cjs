// Preloaded (`node --require`) by tools/bench-agent.ts into both processes it compares: on
// SIGUSR2 it writes the process's memory figures as one JSON line to the file named by
// SKIFF_MEMORY_PROBE_FILE. Nothing else: it must not change what it measures.
'use strict';

const file = process.env.SKIFF_MEMORY_PROBE_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    require('node:fs').writeFileSync(file, `${JSON.stringify({ rss, heapTotal, heapUsed, external, arrayBuffers })}\n`);
  });
}
