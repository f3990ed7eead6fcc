// Stands in for the `ssh2` package in the agent's bundle (tools/lib/setup.sh, build_agent).
// The agent reaches Docker through its unix socket only; docker-modem loads ssh2 for its
// ssh:// transport, which would cost the idle agent ~8 MB (its WebAssembly and crypto set-up).
'use strict';

class Client {
  constructor() {
    throw new Error('the Skiff agent reaches Docker through a unix socket: ssh:// is not supported');
  }
}

module.exports = { Client };
