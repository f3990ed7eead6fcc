/**
 * What the Caddy config renderer gets: plain data for one server, gathered by the caller
 * from the domain, security-entry and certificate records and the proxy settings.
 */

export type CertificateType = 'none' | 'acme' | 'custom';

/** One basic-auth user of an application (a security entry). */
export interface BasicAuthUser {
  username: string;
  /** bcrypt (`$2a$`, `$2b$` or `$2y$`), as the security entry stores it. */
  passwordHash: string;
}

/** One enabled or disabled domain record with the upstream it routes to. */
export interface ProxyRoute {
  /** Named in errors. */
  domainId: string;
  host: string;
  /** Public path prefix; null or empty: `/`. */
  path: string | null;
  /** The port the service listens on; null: 3000 (the default of applications and previews). */
  port: number | null;
  https: boolean;
  certificateType: CertificateType;
  /** A key of `ProxyOptions.certResolvers`; null: the default issuer. Only with `acme`. */
  customCertResolver: string | null;
  /** A key of `ProxyOptions.entrypoints`; null: the default HTTP/HTTPS listeners. */
  customEntrypoint: string | null;
  /** The path the service receives (added in front); null or `/`: nothing added. */
  internalPath: string | null;
  stripPath: boolean;
  /** Names of `ServerProxyInput.middlewares`, applied in this order. */
  middlewares: string[] | null;
  /** Applies the shared middleware named `forward-auth` before the others. */
  forwardAuthEnabled?: boolean;
  enabled: boolean;
  /**
   * The workload's name on skiff-network, dialled as `<upstream>:<port>`: an application's
   * appName, or the compose service name the domain names.
   */
  upstream: string;
  /** The basic-auth users of the route's application; empty: no authentication. */
  basicAuth: BasicAuthUser[];
  /**
   * For `custom`: the stored certificate to serve. Absent: the one among `certificates` whose
   * names cover the host (an exact name before a wildcard, then by id).
   */
  certificateId?: string | null;
}

/** A stored certificate. `certificateChain` and `privateKey` are secrets. */
export interface ProxyCertificate {
  id: string;
  /** PEM, leaf first. */
  certificateChain: string;
  /** PEM. */
  privateKey: string;
  /** The DNS names it covers (the record's subjectNames). */
  subjectNames: string[];
}

/** The platform's own site: the whole host goes to the control plane. */
export interface PlatformDomain {
  host: string;
  /** The control plane's dial address, `host:port`. */
  upstream: string;
  https: boolean;
  certificateType: CertificateType;
  certificateId?: string | null;
  /** Caddy HTTP handlers run, in order, before the reverse proxy to the control plane. */
  handlers?: CaddyHandler[];
}

/** An ACME or internal issuer; `internal` is Caddy's own CA (tests). */
export type IssuerOption =
  | { module: 'acme'; email?: string | null; ca?: string | null }
  | { module: 'internal' };

export interface ProxyOptions {
  /** Absolute path of the admin API's unix socket. Never a TCP address. */
  adminSocket: string;
  /** Ports Caddy listens on inside its container. Defaults 80 and 443. */
  httpPort?: number;
  httpsPort?: number;
  /** The public HTTPS port redirects point to; default `httpsPort`. */
  redirectHttpsPort?: number;
  /** Issuer of `acme` domains without a resolver and of the platform domain. Default ACME. */
  issuer?: IssuerOption;
  /** ACME account address for the default ACME issuer. */
  acmeEmail?: string | null;
  /** Named issuers for `customCertResolver`. */
  certResolvers?: Record<string, IssuerOption>;
  /** Extra listeners for `customEntrypoint`: name → port. */
  entrypoints?: Record<string, number>;
  /** Realm of basic auth. Default `Restricted`. */
  basicAuthRealm?: string;
  /** Caddy's storage root (certificates, ACME accounts); absent: Caddy's default. */
  storageRoot?: string | null;
  /**
   * The proxy dashboard: a server on this port (inside the container) answering Caddy's
   * Prometheus metrics at `/metrics`, 404 elsewhere. Absent or null: none.
   */
  dashboard?: { port: number } | null;
}

/** One Caddy HTTP handler as JSON (`{"handler": "headers", ...}`). */
export type CaddyHandler = { handler: string } & Record<string, unknown>;

export interface ServerProxyInput {
  routes: ProxyRoute[];
  certificates: ProxyCertificate[];
  platform: PlatformDomain | null;
  /**
   * The shared middlewares (the middleware proxy config): name → Caddy handlers run in order
   * before the route's rewrites. A route naming one not here is refused.
   */
  middlewares: Record<string, CaddyHandler[]>;
  /**
   * Handlers declared for later (the platform site's handlers while it has no host): loaded
   * in a route that never matches, so Caddy checks them now.
   */
  standbyHandlers?: CaddyHandler[];
  options: ProxyOptions;
}
