/**
 * The exit status with which the control plane (settings.reloadServer) or an agent
 * (settings.updateServer) asks its supervisor to start it again; tools/up does so, on the
 * program installed at that moment. Any other status stops the platform as before.
 */
export const RESTART_EXIT_CODE = 75;
