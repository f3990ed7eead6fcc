/** The agent program's version, reported to the control plane at registration (the platform's version). */
export const AGENT_VERSION = '0.1.0';
