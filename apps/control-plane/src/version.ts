/** The platform version; a test keeps it equal to apps/control-plane/package.json. */
export const VERSION = '0.1.0';
