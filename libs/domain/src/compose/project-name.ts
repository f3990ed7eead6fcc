const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * Why `appName` cannot name a compose project (or Swarm stack), or null. Compose v2 refuses
 * other project names and v1 rewrites them, so two appNames could share one project.
 */
export function refuseProjectName(appName: string): string | null {
  return PROJECT_NAME.test(appName)
    ? null
    : `appName "${appName}" cannot name a compose project: use lowercase letters, digits, "-" and "_" (starting with a letter or digit)`;
}
