/**
 * The options every client (Producer, PullConsumer, PushConsumer, LitePullConsumer) shares: RocketMQ's
 * ClientConfig, with units in the names. One place: the `ClientOptions` type (a doc comment per field,
 * default and unit), frozen defaults, one zod shape that each client's own schema extends, and one
 * parse function that throws an `InvalidArgumentError` whose `field` is the option's name
 *.
 */
import { parseStrictOptions } from '../../common/option-errors.js';
import { hrtime, pid } from 'node:process';
import { networkInterfaces } from 'node:os';
import { z } from 'zod';
import { InvalidArgumentError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { defaultLogger } from '../../common/env-logger.js';
import { systemClock, type Clock } from '../../common/clock.js';
import { Credentials, credentialsProblem, type CredentialsSource } from '../../remoting/transport-factory.js';
import type { TlsOptions } from '../../remoting/transport-factory.js';
import { namespaceProblem } from './namespace.js';
import type { OpenTelemetryOption } from '../telemetry/otel-api.js';

export interface ClientOptions {
  /**
   * The broker(s) to talk to: the HTTP base URL of the bundled broker (e.g. `http://127.0.0.1:8081`),
   * or several. Route queries go to the first that answers; the route then names every broker.
   * Give exactly one of `endpoints` and `namesrvAddr`.
   */
  endpoints?: string | readonly string[];
  /**
   * The NameServers of an Apache RocketMQ cluster (or the bundled broker's remoting port), as RocketMQ
   * writes them: `'host:port;host:port'`, or an array of `'host:port'`. Routes come from the
   * NameServers (another one is tried when one fails) and every broker is reached over RocketMQ's TCP
   * remoting protocol. Give exactly one of `endpoints` and `namesrvAddr`.
   */
  namesrvAddr?: string | readonly string[];
  /**
   * Names this client instance within the process; the client id is `clientIP@instanceName`. Clients
   * with the same id share one MQClientInstance. Default `DEFAULT`, which producers and CLUSTERING
   * consumers replace by `<pid>#<hrtime ns>` (RocketMQ's changeInstanceNameToPID), so each gets its own
   * instance.
   */
  instanceName?: string;
  /** The IP in the client id. Default: the first non-internal IPv4 address, else `127.0.0.1`. */
  clientIP?: string;
  /** Route refresh period, ms (RocketMQ's pollNameServerInterval). Default 30000. */
  pollNameServerIntervalMs?: number;
  /** Heartbeat period to every broker, ms (heartbeatBrokerInterval). Default 30000. */
  heartbeatBrokerIntervalMs?: number;
  /** Consumer offset persistence period, ms (persistConsumerOffsetInterval). Default 5000. */
  persistConsumerOffsetIntervalMs?: number;
  /** Rebalance period, ms (RocketMQ's rebalance waitInterval). Default 20000. */
  rebalanceIntervalMs?: number;
  /** Timeout of an ordinary call to a broker (route, heartbeat, offsets, send), ms. Default 3000. */
  requestTimeoutMs?: number;
  /**
   * HTTP connections per broker for control calls (heartbeat, offsets, routes, sends; `endpoints` only:
   * over TCP one connection carries every call). Held pulls and the membership watch have a lane of
   * their own (one connection each, no limit), so this does not depend on the number of queues held.
   * Default 64.
   */
  connectionsPerBroker?: number;
  /**
   * How long the broker may hold a membership watch (WATCH_CONSUMER_IDS) before answering, ms; the
   * stand-in for RocketMQ's NOTIFY_CONSUMER_IDS_CHANGED, which a RocketMQ broker sends itself when
   * `namesrvAddr` is used. Default 30000, at most 120000.
   */
  watchConsumerIdsHoldMs?: number;
  /**
   * A broker that has not answered for this long is reported once through the logger (warn) until it
   * answers again, ms. Default 10000.
   */
  brokerUnreachableWarnMs?: number;
  /** Bearer token for a bundled broker started with an access token (`endpoints` only). */
  accessToken?: string | undefined;
  /**
   * The account of a cluster with ACL turned on (RocketMQ's plain ACL, as `AclClientRPCHook` signs):
   * `{ accessKey, secretKey, securityToken? }`, or a function returning them (sync or async), called
   * for every request so rotated or STS credentials take effect without a restart; an async function
   * must answer within the request's timeout. Every request is signed, over TCP and HTTP. Default: none.
   */
  credentials?: CredentialsSource | undefined;
  /**
   * TLS to the NameServers and brokers (RocketMQ's `tls.enable`): `true` checks their certificates
   * against the system's CAs; an object gives Node's `tls.connect` options (`ca`, `cert`, `key`,
   * `servername`, `rejectUnauthorized`). With `endpoints` the URLs must be `https://` (an `https://`
   * URL alone uses TLS with the system's CAs). A failed handshake is a `TlsError` naming the address.
   * Default: no TLS.
   */
  tls?: boolean | TlsOptions | undefined;
  /**
   * RocketMQ's ClientConfig.namespace: topics and groups travel as `namespace%Name` (retry and
   * dead-letter topics as `%RETRY%namespace%group`), system topics untouched; everything this client
   * hands back carries the plain names. Letters, digits, `_` and `-`. Default: none.
   */
  namespace?: string | undefined;
  /** A pino-shaped logger. Default: silent. */
  logger?: Logger;
  /** The clock all timers go through (tests drive it). Default: the system clock. */
  clock?: Clock;
  /**
   * OpenTelemetry spans and metrics (docs/observability.md). `true` (the default): when
   * `@opentelemetry/api` is installed, it is imported at start and the globally registered tracer and
   * meter providers are used (without an SDK registered they do nothing). `false`: never imported.
   * `{ tracerProvider, meterProvider }`: these providers instead of the global ones.
   */
  openTelemetry?: OpenTelemetryOption;
}

/** RocketMQ's ClientConfig defaults, with units in the names. */
export const DEFAULT_CLIENT_OPTIONS = Object.freeze({
  instanceName: 'DEFAULT',
  pollNameServerIntervalMs: 30_000,
  heartbeatBrokerIntervalMs: 30_000,
  persistConsumerOffsetIntervalMs: 5_000,
  rebalanceIntervalMs: 20_000,
  requestTimeoutMs: 3_000,
  connectionsPerBroker: 64,
  watchConsumerIdsHoldMs: 30_000,
  brokerUnreachableWarnMs: 10_000,
  openTelemetry: true,
});

export interface ResolvedClientOptions {
  /** The HTTP broker URLs; empty when `namesrvAddr` is used. */
  endpoints: readonly string[];
  /** The NameServer addresses (`host:port`); empty when `endpoints` is used. */
  namesrvAddr: readonly string[];
  instanceName: string;
  clientIP: string;
  pollNameServerIntervalMs: number;
  heartbeatBrokerIntervalMs: number;
  persistConsumerOffsetIntervalMs: number;
  rebalanceIntervalMs: number;
  requestTimeoutMs: number;
  connectionsPerBroker: number;
  watchConsumerIdsHoldMs: number;
  brokerUnreachableWarnMs: number;
  accessToken?: string | undefined;
  /** The credentials every request is signed with; printing it never shows the secret. */
  credentials?: Credentials | undefined;
  /** The TLS options (`true` became `{}`), or undefined for none. */
  tls?: TlsOptions | undefined;
  /** The namespace; undefined when there is none (an empty string is none). */
  namespace?: string | undefined;
  logger: Logger;
  clock: Clock;
  openTelemetry: OpenTelemetryOption;
}

/** Why `s` is not a broker URL, or null. A port past 65535 makes URL parsing fail: say so, not "not a URL". */
function brokerUrlProblem(s: string): string | null {
  const port = /^https?:\/\/(?:\[[^\]]*\]|[^/?#:]*):(\d+)(?:[/?#]|$)/i.exec(s)?.[1];
  if (port !== undefined && Number(port) > 65535) return `the port ${port} is out of range: it must be within 1..65535`;
  try {
    const u = new URL(s);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0) return null;
  } catch {
    // not a URL at all: the message below
  }
  return 'must be an http:// or https:// broker URL, e.g. http://127.0.0.1:8081';
}

const endpointUrl = z
  .string()
  .trim()
  .check((ctx) => {
    const problem = brokerUrlProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
  })
  .transform((s) => s.replace(/\/+$/, ''));

/** `host:port` with a host name, an IPv4 address or a bracketed IPv6 address, and a port in 1..65535. */
export function namesrvAddrProblem(addr: string): string | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/.exec(addr);
  if (!m) return `bad address '${addr}': must be host:port, e.g. 127.0.0.1:9876`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `bad address '${addr}': the port must be within 1..65535`;
  return null;
}

const namesrvAddrEntry = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    const p = namesrvAddrProblem(v);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

const methods = (names: readonly string[]) => (v: unknown) =>
  v !== null && typeof v === 'object' && names.every((n) => typeof (v as Record<string, unknown>)[n] === 'function');

export const loggerSchema = z.custom<Logger>(methods(['debug', 'info', 'warn', 'error']), {
  message: 'must be a pino-shaped logger with debug, info, warn and error methods',
});
export const clockSchema = z.custom<Clock>(
  methods(['now', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']),
  { message: 'must be a Clock with now, setTimeout, clearTimeout, setInterval and clearInterval' },
);

/**
 * The `credentials` option: fixed credentials (checked here) or a function (checked per request),
 * held in a `Credentials`, which never prints the secret. The message never quotes the value.
 */
export const credentialsSchema = z
  .custom<CredentialsSource>((v) => typeof v === 'function' || credentialsProblem(v) === null, {
    error: (issue) =>
      `${credentialsProblem(issue.input) ?? 'invalid'} (or a function returning { accessKey, secretKey, securityToken? })`,
  })
  .transform((v) => new Credentials(v));
const tlsMaterial = z.union([
  z.string().min(1),
  z.instanceof(Buffer),
  z.array(z.union([z.string().min(1), z.instanceof(Buffer)])).min(1),
]);

/** `tls`: true, false or Node's tls.connect options (the subset a client passes on); resolved to options or undefined. */
export const tlsSchema = z
  .union([
    z.boolean(),
    z.strictObject({
      ca: tlsMaterial.optional(),
      cert: tlsMaterial.optional(),
      key: tlsMaterial.optional(),
      servername: z.string().min(1).optional(),
      rejectUnauthorized: z.boolean().optional(),
    }),
  ])
  .transform((v): TlsOptions | undefined => (v === false ? undefined : v === true ? {} : (v as TlsOptions)))
  .optional();

/** An integer number of milliseconds within [min, max]. */
export const ms = (min: number, max = 2_147_483_647): z.ZodInt => z.int().min(min).max(max);

/** The shared zod shape; each client's schema spreads it and adds its own options. */
export const clientOptionsShape = {
  endpoints: z
    .union([
      endpointUrl.transform((s) => [s]),
      z.array(endpointUrl).min(1, { message: 'must name at least one broker' }),
    ])
    .transform((a): readonly string[] => Object.freeze([...new Set(a)]))
    .optional(),
  namesrvAddr: z
    .union([
      // RocketMQ's form: addresses separated by ';' (empty parts, e.g. a trailing ';', are ignored).
      z
        .string()
        .transform((s) => s.split(';').map((p) => p.trim()))
        .transform((a) => a.filter((p) => p.length > 0))
        .superRefine((a, ctx) => {
          if (a.length === 0)
            ctx.addIssue({ code: 'custom', message: 'must name at least one NameServer (host:port)' });
          for (const addr of a) {
            const p = namesrvAddrProblem(addr);
            if (p) ctx.addIssue({ code: 'custom', message: p });
          }
        }),
      z.array(namesrvAddrEntry).min(1, { message: 'must name at least one NameServer (host:port)' }),
    ])
    .transform((a): readonly string[] => Object.freeze([...new Set(a)]))
    .optional(),
  instanceName: z
    .string()
    .min(1)
    .regex(/^[^@\s]+$/, { message: 'must not contain @ or whitespace' })
    .default(DEFAULT_CLIENT_OPTIONS.instanceName),
  clientIP: z.string().min(1).optional(),
  pollNameServerIntervalMs: ms(10).default(DEFAULT_CLIENT_OPTIONS.pollNameServerIntervalMs),
  heartbeatBrokerIntervalMs: ms(10).default(DEFAULT_CLIENT_OPTIONS.heartbeatBrokerIntervalMs),
  persistConsumerOffsetIntervalMs: ms(10).default(DEFAULT_CLIENT_OPTIONS.persistConsumerOffsetIntervalMs),
  rebalanceIntervalMs: ms(10).default(DEFAULT_CLIENT_OPTIONS.rebalanceIntervalMs),
  requestTimeoutMs: ms(1).default(DEFAULT_CLIENT_OPTIONS.requestTimeoutMs),
  connectionsPerBroker: z.int().min(1).max(65_536).default(DEFAULT_CLIENT_OPTIONS.connectionsPerBroker),
  watchConsumerIdsHoldMs: ms(100, 120_000).default(DEFAULT_CLIENT_OPTIONS.watchConsumerIdsHoldMs),
  brokerUnreachableWarnMs: ms(0).default(DEFAULT_CLIENT_OPTIONS.brokerUnreachableWarnMs),
  accessToken: z.string().min(1).optional(),
  credentials: credentialsSchema.optional(),
  tls: tlsSchema,
  namespace: z
    .string()
    .superRefine((v, ctx) => {
      const p = v === '' ? null : namespaceProblem(v);
      if (p) ctx.addIssue({ code: 'custom', message: p });
    })
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
  logger: loggerSchema.default(() => defaultLogger()),
  clock: clockSchema.default(systemClock),
  openTelemetry: z
    .union([
      z.boolean(),
      z
        .object({
          tracerProvider: z.custom<{ getTracer(name: string): unknown }>(methods(['getTracer'])).optional(),
          meterProvider: z.custom<{ getMeter(name: string): unknown }>(methods(['getMeter'])).optional(),
        })
        .strict(),
    ])
    .default(DEFAULT_CLIENT_OPTIONS.openTelemetry),
};

/**
 * Validates `input` with `schema`; the first problem becomes an InvalidArgumentError whose `field` is
 * the option's name (a path such as `endpoints.1` for an element).
 */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new InvalidArgumentError('options', `${what} options must be an object`);
  return parseStrictOptions(schema, input, what);
}

/** The first non-internal IPv4 address of this host, or `127.0.0.1` (RocketMQ's RemotingUtil.getLocalAddress). */
export function localIPv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** RocketMQ's changeInstanceNameToPID: `DEFAULT` becomes `<pid>#<monotonic ns>`; other names are kept. */
export function instanceNameForClient(instanceName: string): string {
  return instanceName === 'DEFAULT' ? `${pid}#${hrtime.bigint()}` : instanceName;
}

/**
 * Finishes the shared part: exactly one of `endpoints` and `namesrvAddr` (the other becomes an empty
 * list), and the default client IP.
 */
export function finishClientOptions<
  T extends {
    clientIP?: string | undefined;
    endpoints?: readonly string[] | undefined;
    namesrvAddr?: readonly string[] | undefined;
    tls?: TlsOptions | undefined;
  },
>(o: T): T & { clientIP: string; endpoints: readonly string[]; namesrvAddr: readonly string[] } {
  if (o.endpoints !== undefined && o.namesrvAddr !== undefined)
    throw new InvalidArgumentError(
      'namesrvAddr',
      'give either endpoints (the bundled broker over HTTP) or namesrvAddr (RocketMQ NameServers over TCP), not both',
    );
  if (o.endpoints === undefined && o.namesrvAddr === undefined)
    throw new InvalidArgumentError(
      'endpoints',
      'endpoints (the bundled broker, e.g. http://127.0.0.1:8081) or namesrvAddr (RocketMQ NameServers, e.g. 127.0.0.1:9876) is required',
    );
  const plain = o.tls === undefined ? undefined : o.endpoints?.find((e) => /^http:/i.test(e));
  if (plain !== undefined)
    throw new InvalidArgumentError('tls', `is set, so the broker URLs must be https://, got ${plain}`);
  return {
    ...o,
    endpoints: o.endpoints ?? Object.freeze([]),
    namesrvAddr: o.namesrvAddr ?? Object.freeze([]),
    clientIP: o.clientIP ?? localIPv4(),
  };
}

/** RocketMQ's buildMQClientId: `clientIP@instanceName`. */
export function buildClientId(o: { clientIP: string; instanceName: string }): string {
  return `${o.clientIP}@${o.instanceName}`;
}
