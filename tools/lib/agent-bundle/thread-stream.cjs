// Stands in for the `thread-stream` package in the agent's bundle (tools/lib/setup.sh, build_agent).
// pino loads it for its transports (a log destination in a worker thread); the agent writes its
// log to stdout through pino.destination and never starts one, and loading it would cost the idle
// agent ~1.3 MB (worker_threads and its messaging).
'use strict';

class ThreadStream {
  constructor() {
    throw new Error('the Skiff agent logs to stdout: pino transports are not bundled');
  }
}

module.exports = ThreadStream;
