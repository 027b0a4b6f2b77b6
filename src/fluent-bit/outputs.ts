/**
 * Typed fluent-bit outputs (Loki, Elasticsearch/OpenSearch, forward, stdout).
 *
 * Credentials are never values here: an option that carries a secret takes a
 * reference to a Kubernetes Secret key. The rendered config only holds a
 * `${ENV_VAR}` reference (fluent-bit interpolates environment variables in
 * config values at load time) and the pod gets that variable from the Secret.
 * So the ConfigMap, its checksum and `kubectl get cm -o yaml` never show a
 * credential.
 *
 * Pure module: no cdk8s imports. Exported through the package index (jsii).
 */
import { ClassicEntry, onOff } from './classic-format';
import { RenderedOutput, SecretEnvVar } from './rendered-output';
import { describeValue, isPort } from '../agent/checks';
import { checkFields, PropFields, shape as t } from '../agent/prop-shape';

/** A key of a Kubernetes Secret in the collector's namespace. */
export interface SecretKeyRefOptions {
  /** Name of the Secret (same namespace as the collector). */
  readonly secretName: string;
  /** Key inside the Secret. */
  readonly key: string;
}

/** Options every output shares. */
export interface OutputCommonOptions {
  /**
   * Tag pattern of the records this output receives.
   * Container logs are tagged `kube.*`, systemd units `host.*`.
   * @default '*'
   */
  readonly match?: string;
  /**
   * Alias of the output: names its metrics (`fluentbit_output_*{name="<alias>"}`)
   * and the environment variables that carry its credentials. Letters, digits, `-`, `_`.
   * @default the output kind (`loki`, `es`, `opensearch`, `forward`, `stdout`), suffixed
   *   with `_<n>` when several outputs of one kind are configured
   */
  readonly alias?: string;
  /**
   * How many times a failed chunk is retried before it is dropped (fluent-bit `Retry_Limit`).
   * Unset means no limit: chunks wait in the filesystem buffer (bounded by
   * `storageTotalLimitSize`) until the destination accepts them, so an outage loses nothing
   * until the buffer is full. Set a limit where a destination may reject records for good but
   * still ask for a retry (Elasticsearch answers mapping conflicts in a bulk response, and the
   * whole chunk is retried).
   * @default - no limit (`Retry_Limit no_limits`)
   */
  readonly retryLimit?: number;
  /**
   * Upper bound of this output's filesystem buffer on the node (`storage.total_limit_size`);
   * when full, the oldest chunks are discarded. Bounds the disk a long outage can use on
   * every node.
   * @default '1G'
   */
  readonly storageTotalLimitSize?: string;
}

/** Options of outputs that speak TLS. */
export interface OutputTlsOptions {
  /**
   * Connect with TLS.
   * @default false
   */
  readonly tls?: boolean;
  /**
   * Verify the server certificate (only with `tls`).
   * @default true
   */
  readonly tlsVerify?: boolean;
}

/** Line format of the Loki output. */
export enum LokiLineFormat {
  /** Each record as one JSON object. */
  JSON = 'json',
  /** `key=value` pairs separated by spaces. */
  KEY_VALUE = 'key_value',
}

/** Options of the Loki output (`loki` plugin). */
export interface LokiOutputOptions extends OutputCommonOptions, OutputTlsOptions {
  /** Loki host name or IP, without scheme or path (e.g. `loki-gateway.monitoring.svc`). */
  readonly host: string;
  /**
   * Loki port.
   * @default 3100
   */
  readonly port?: number;
  /**
   * Push path.
   * @default - the plugin's default (`/loki/api/v1/push`)
   */
  readonly uri?: string;
  /**
   * Tenant (`X-Scope-OrgID`) for multi-tenant Loki.
   * @default - none (single tenant)
   */
  readonly tenantId?: string;
  /**
   * Basic-auth user name (not a secret: Grafana Cloud uses a numeric instance id).
   * @default - no basic auth
   */
  readonly httpUser?: string;
  /**
   * Basic-auth password, from a Secret.
   * @default - no basic auth
   */
  readonly httpPassword?: SecretKeyRefOptions;
  /**
   * Bearer token, from a Secret.
   * @default - none
   */
  readonly bearerToken?: SecretKeyRefOptions;
  /**
   * Stream labels. Values may be fixed text or record accessors (`$kubernetes['namespace_name']`).
   * Keep the set small: every distinct combination is a Loki stream.
   * @default { job: 'fluent-bit', namespace: "$kubernetes['namespace_name']", container: "$kubernetes['container_name']" }
   */
  readonly labels?: { [key: string]: string };
  /**
   * Add every pod label as a stream label (`auto_kubernetes_labels`). High cardinality on
   * most clusters.
   * @default false
   */
  readonly autoKubernetesLabels?: boolean;
  /**
   * Record keys removed before sending (`remove_keys`), e.g. keys already used as labels: a
   * top-level key (`stream`) or a record accessor for a nested one
   * (`$kubernetes['annotations']`; the kubernetes filter nests pod metadata under `kubernetes`).
   * @default - none
   */
  readonly removeKeys?: string[];
  /**
   * Log line format.
   * @default LokiLineFormat.JSON
   */
  readonly lineFormat?: LokiLineFormat;
}

/** Options of the Elasticsearch (`es`) and OpenSearch (`opensearch`) outputs. */
export interface ElasticsearchOutputOptions extends OutputCommonOptions, OutputTlsOptions {
  /** Host name or IP of the cluster (or of its ingest endpoint). */
  readonly host: string;
  /**
   * Port.
   * @default 9200
   */
  readonly port?: number;
  /**
   * Index name, used when `logstashFormat` is false.
   * @default 'fluent-bit'
   */
  readonly index?: string;
  /**
   * Write to daily indices `<logstashPrefix>-YYYY.MM.DD`.
   * @default true
   */
  readonly logstashFormat?: boolean;
  /**
   * Prefix of daily indices (with `logstashFormat`).
   * @default 'logstash'
   */
  readonly logstashPrefix?: string;
  /**
   * Basic-auth user name.
   * @default - no basic auth
   */
  readonly httpUser?: string;
  /**
   * Basic-auth password, from a Secret.
   * @default - no basic auth
   */
  readonly httpPassword?: SecretKeyRefOptions;
  /**
   * Elastic Cloud `user:password`, from a Secret (Elasticsearch only).
   * @default - none
   */
  readonly cloudAuth?: SecretKeyRefOptions;
  /**
   * Elastic Cloud id (Elasticsearch only).
   * @default - none
   */
  readonly cloudId?: string;
  /**
   * Omit the `_type` field (required by Elasticsearch 8 and OpenSearch 2).
   * @default true
   */
  readonly suppressTypeName?: boolean;
  /**
   * Replace dots in field names with underscores, so Kubernetes labels such as
   * `app.kubernetes.io/name` do not clash with object mappings.
   * @default true
   */
  readonly replaceDots?: boolean;
  /**
   * Print the bulk API's request and response when it reports an error (rejected records) in
   * fluent-bit's own log. A diagnostic aid: the output can be large.
   * @default false
   */
  readonly traceError?: boolean;
}

/** Options of the forward output (Fluentd / fluent-bit aggregators). */
export interface ForwardOutputOptions extends OutputCommonOptions, OutputTlsOptions {
  /** Host name or IP of the aggregator. */
  readonly host: string;
  /**
   * Port.
   * @default 24224
   */
  readonly port?: number;
  /**
   * Shared key of the secure forward handshake, from a Secret.
   * @default - no handshake
   */
  readonly sharedKey?: SecretKeyRefOptions;
  /**
   * Host name announced in the handshake.
   * @default - the plugin's default (`localhost`)
   */
  readonly selfHostname?: string;
  /**
   * User name of the handshake's user authentication.
   * @default - none
   */
  readonly username?: string;
  /**
   * Password of the handshake's user authentication, from a Secret.
   * @default - none
   */
  readonly password?: SecretKeyRefOptions;
  /**
   * Wait for the aggregator's acknowledgement of each chunk (at-least-once delivery);
   * the aggregator must support acks.
   * @default false
   */
  readonly requireAckResponse?: boolean;
}

/** Record format of the stdout output. */
export enum StdoutFormat {
  /** fluent-bit's human-readable msgpack dump. */
  MSGPACK = 'msgpack',
  /** One JSON array per chunk. */
  JSON = 'json',
  /** One JSON object per line. */
  JSON_LINES = 'json_lines',
}

/** Options of the stdout output (trials and debugging). */
export interface StdoutOutputOptions extends OutputCommonOptions {
  /**
   * Record format.
   * @default StdoutFormat.JSON_LINES
   */
  readonly format?: StdoutFormat;
}

/** Kind of a fluent-bit output. */
export enum FluentBitOutputKind {
  /** Grafana Loki (`loki`). */
  LOKI = 'loki',
  /** Elasticsearch (`es`). */
  ELASTICSEARCH = 'es',
  /** OpenSearch (`opensearch`). */
  OPENSEARCH = 'opensearch',
  /** Fluentd forward protocol (`forward`). */
  FORWARD = 'forward',
  /** Standard output (`stdout`). */
  STDOUT = 'stdout',
}

type Field = [key: string, value: string | number | boolean | undefined];
type SecretFn = (suffix: string, ref?: SecretKeyRefOptions) => string | undefined;
/** Renders an output's own fields; pushes every problem (naming the option) to `problems`. */
type FieldsFn = (secret: SecretFn, problems: string[]) => Field[];

/** A fluent-bit output destination. Create one with the static factories. */
export class FluentBitOutput {
  /** Ship to Grafana Loki. */
  public static loki(options: LokiOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.LOKI, options, LOKI_FIELDS, (secret, problems) => {
      const labels = options.labels ?? {
        job: 'fluent-bit',
        namespace: "$kubernetes['namespace_name']",
        container: "$kubernetes['container_name']",
      };
      const labelPairs = Object.keys(labels).sort().map((k) => {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || /[,\s]/.test(labels[k]) || labels[k] === '') {
          problems.push(`labels[${JSON.stringify(k)}]: the Loki label ${JSON.stringify(k)}=${JSON.stringify(labels[k])} is invalid; `
            + 'names are [A-Za-z_][A-Za-z0-9_]*, values are non-empty without commas or spaces.');
        } else if (labels[k].startsWith('$')) {
          recordAccessor(problems, `labels.${k}`, labels[k]);
        }
        return `${k}=${labels[k]}`;
      });
      for (const key of options.removeKeys ?? []) {
        recordKey(problems, 'removeKeys', key);
      }
      return [
        ['Host', host(problems, options.host)],
        ['Port', port(problems, options.port ?? 3100)],
        ['Uri', options.uri],
        ...tlsFields(options, problems),
        ['Tenant_ID', options.tenantId],
        ['HTTP_User', options.httpUser],
        ['HTTP_Passwd', secret('HTTP_PASSWD', options.httpPassword)],
        ['Bearer_Token', secret('BEARER_TOKEN', options.bearerToken)],
        ['Labels', labelPairs.length > 0 ? labelPairs.join(', ') : undefined],
        ['Auto_Kubernetes_Labels', onOff(options.autoKubernetesLabels ?? false)],
        ['Remove_Keys', options.removeKeys && options.removeKeys.length > 0 ? options.removeKeys.join(', ') : undefined],
        ['Line_Format', options.lineFormat ?? LokiLineFormat.JSON],
      ];
    });
  }

  /** Ship to Elasticsearch (`es` plugin). */
  public static elasticsearch(options: ElasticsearchOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.ELASTICSEARCH, options, SEARCH_FIELDS, (secret, problems) => [
      ...searchFields(options, secret, problems),
      ['Cloud_ID', options.cloudId],
      ['Cloud_Auth', secret('CLOUD_AUTH', options.cloudAuth)],
    ]);
  }

  /** Ship to OpenSearch (`opensearch` plugin). */
  public static openSearch(options: ElasticsearchOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.OPENSEARCH, options, SEARCH_FIELDS, (secret, problems) => {
      if (options.cloudAuth !== undefined || options.cloudId !== undefined) {
        problems.push('cloudId/cloudAuth are Elastic Cloud options; use FluentBitOutput.elasticsearch() or remove them.');
      }
      return searchFields(options, secret, problems);
    });
  }

  /** Ship to a Fluentd or fluent-bit aggregator over the forward protocol. */
  public static forward(options: ForwardOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.FORWARD, options, FORWARD_FIELDS, (secret, problems) => [
      ['Host', host(problems, options.host)],
      ['Port', port(problems, options.port ?? 24224)],
      ...tlsFields(options, problems),
      ['Shared_Key', secret('SHARED_KEY', options.sharedKey)],
      ['Self_Hostname', options.selfHostname],
      ['Username', options.username],
      ['Password', secret('PASSWORD', options.password)],
      ['Require_ack_response', options.requireAckResponse === undefined ? undefined : onOff(options.requireAckResponse)],
    ]);
  }

  /** Print records on the collector's standard output (trials only: it doubles log volume on the node). */
  public static stdout(options: StdoutOutputOptions = {}): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.STDOUT, options, STDOUT_FIELDS, () => [
      ['Format', options.format ?? StdoutFormat.JSON_LINES],
    ]);
  }

  /** The plugin this output uses. */
  public readonly kind: FluentBitOutputKind;
  /** The alias given in the options, if any. */
  public readonly alias?: string;
  /** Tag pattern of the records it receives. */
  public readonly match: string;

  private readonly common: OutputCommonOptions;
  private readonly fields: FieldsFn;
  private readonly problems: string[];

  private constructor(kind: FluentBitOutputKind, options: OutputCommonOptions, optionFields: PropFields, fields: FieldsFn) {
    this.kind = kind;
    // Wrong types (JavaScript, parsed YAML) become problems like any other; nothing is thrown here,
    // so the collector using the output reports every problem with its own path.
    const typeProblems = typeof options === 'object' && options !== null && !Array.isArray(options)
      ? checkFields('', options as unknown as { [key: string]: unknown }, optionFields).map((m) => m.replace(/^prop /, ''))
      : [`the options must be an object, got ${describeValue(options)}`];
    const common: OutputCommonOptions = typeProblems.length === 0 ? options : {};
    this.common = common;
    this.fields = fields;
    this.alias = common.alias;
    this.match = common.match ?? '*';
    const problems = [...typeProblems];
    if (typeProblems.length === 0) {
      problems.push(...singleLineProblems(options as unknown as { [key: string]: unknown }));
      if (!/^\S+$/.test(this.match)) {
        problems.push(`match ${JSON.stringify(this.match)} must be a non-empty tag pattern without spaces.`);
      }
      if (common.alias !== undefined && !ALIAS_PATTERN.test(common.alias)) {
        problems.push(`alias ${JSON.stringify(common.alias)} must match ${ALIAS_PATTERN} (it names env vars and metrics).`);
      }
      if (common.retryLimit !== undefined && (!Number.isInteger(common.retryLimit) || common.retryLimit < 1 || common.retryLimit > 2 ** 31 - 1)) {
        problems.push(`retryLimit ${common.retryLimit} must be a whole number >= 1 (leave it unset for no limit).`);
      }
      if (common.storageTotalLimitSize !== undefined && !SIZE_PATTERN.test(common.storageTotalLimitSize)) {
        problems.push(`storageTotalLimitSize ${JSON.stringify(common.storageTotalLimitSize)} must be a fluent-bit size such as '512M' or '2G'.`);
      }
      // The fields are pure: rendering them once with placeholder secrets finds every problem now.
      fields((_suffix, ref) => {
        if (ref !== undefined) problems.push(...secretRefProblems(ref));
        return '${PLACEHOLDER}';
      }, problems);
    }
    this.problems = problems;
  }

  /**
   * Problems with the options, each naming the option ("port 0 must be ..."); the collector that
   * uses the output reports them with its path.
   * @internal
   */
  public _problems(): string[] {
    return [...this.problems];
  }

  /**
   * The `[OUTPUT]` entries for this output under `alias`, and the Secret-backed
   * environment variables they reference. Throws when the options have problems.
   * @internal
   */
  public _render(alias: string): RenderedOutput {
    if (this.problems.length > 0) {
      throw new Error(`FluentBitOutput ${this.kind}: ${this.problems.join('; ')}`);
    }
    const secretEnv: SecretEnvVar[] = [];
    const secret = (suffix: string, ref?: SecretKeyRefOptions): string | undefined => {
      if (ref === undefined) {
        return undefined;
      }
      const envName = `FLB_${alias.toUpperCase().replace(/-/g, '_')}_${suffix}`;
      secretEnv.push({ envName, secretName: ref.secretName, key: ref.key });
      return '${' + envName + '}';
    };
    const fields: Field[] = [
      ['Name', this.kind],
      ['Alias', alias],
      ['Match', this.match],
      ...this.fields(secret, []),
      ['Retry_Limit', this.common.retryLimit ?? 'no_limits'],
      ['storage.total_limit_size', this.common.storageTotalLimitSize ?? '1G'],
    ];
    const entries: ClassicEntry[] = [];
    for (const [key, value] of fields) {
      if (value !== undefined) {
        entries.push({ key, value: typeof value === 'boolean' ? onOff(value) : String(value) });
      }
    }
    return { entries, secretEnv };
  }
}

const ALIAS_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$/;
const SIZE_PATTERN = /^[0-9]+(\.[0-9]+)?([KMG]B?)?$/i;

/** flb record accessor: `$key` then `['sub']` / `[0]` (src/record_accessor/ra.l); no commas, the list is comma-separated. */
const RECORD_ACCESSOR = /^\$[_A-Za-z][A-Za-z0-9_.\-/]*(\[('([^',]|'')*'|[0-9]+)\])*$/;
const TOP_LEVEL_KEY = /^[^\s$,\[\]'"]+$/;

function recordAccessor(problems: string[], prop: string, value: string): boolean {
  if (!RECORD_ACCESSOR.test(value)) {
    const parts = /^\$([_A-Za-z][A-Za-z0-9_\-/]*)[.[]/.exec(value);
    const hint = parts ? ` Write nested keys in brackets with single quotes, e.g. $${parts[1]}['annotations'].` : '';
    problems.push(`${prop} ${JSON.stringify(value)} is not a record accessor ($key, then ['sub-key'] or [index]; no commas).${hint}`);
    return false;
  }
  return true;
}

function recordKey(problems: string[], prop: string, value: string): void {
  if (value.startsWith('$')) {
    if (!recordAccessor(problems, prop, value)) return;
  } else if (!TOP_LEVEL_KEY.test(value)) {
    problems.push(`${prop} ${JSON.stringify(value)} must be a top-level key or a record accessor such as $kubernetes['annotations'].`);
    return;
  }
  // The kubernetes filter nests pod metadata under `kubernetes`: a flattened top-level name matches nothing.
  const flat = /^\$?kubernetes[._]([^[]+)/.exec(value);
  if (flat) {
    problems.push(`${prop} ${JSON.stringify(value)} names a top-level key that does not exist: the kubernetes filter nests `
      + `'${flat[1]}' under 'kubernetes'. Use the record accessor $kubernetes['${flat[1]}'].`);
  }
}

function host(problems: string[], value: string): string {
  // A bare IPv6 literal is fine (fluent-bit resolves the host with getaddrinfo, which takes no brackets).
  if (!/^[^\s/:\[\]]+$/.test(value) && !/^[0-9a-fA-F]*:[0-9a-fA-F:]*$/.test(value)) {
    problems.push(`host ${JSON.stringify(value)} must be a bare host name or IP (no scheme, path or port).`);
  }
  return value;
}

function port(problems: string[], value: number): number {
  if (!isPort(value)) {
    problems.push(`port ${value} must be an integer from 1 to 65535.`);
  }
  return value;
}

/**
 * Every string option becomes one classic-mode value: one line, not empty, without surrounding
 * spaces (fluent-bit would drop them). Checked here so the message names the option, not the key.
 */
function singleLineProblems(options: { [key: string]: unknown }): string[] {
  return Object.keys(options).sort().flatMap((prop) => {
    const value = options[prop];
    if (typeof value !== 'string') return [];
    if (value.trim() === '') return [`${prop} is empty; give a value or leave it unset.`];
    if (/[\r\n]/.test(value)) return [`${prop} ${JSON.stringify(value)} contains a line break; fluent-bit values are single lines.`];
    if (value.trim() !== value) return [`${prop} ${JSON.stringify(value)} has leading or trailing spaces, which fluent-bit would drop; remove them.`];
    return [];
  });
}

function tlsFields(options: OutputTlsOptions, problems: string[]): Field[] {
  if (!options.tls) {
    if (options.tlsVerify !== undefined) {
      problems.push('tlsVerify is set but tls is off; set tls: true or remove tlsVerify.');
    }
    return [['tls', 'Off']];
  }
  return [['tls', 'On'], ['tls.verify', onOff(options.tlsVerify ?? true)]];
}

function searchFields(options: ElasticsearchOutputOptions, secret: SecretFn, problems: string[]): Field[] {
  const logstash = options.logstashFormat ?? true;
  if (logstash && options.index !== undefined) {
    problems.push('index is ignored with logstashFormat (the default); set logstashFormat: false or use logstashPrefix.');
  }
  return [
    ['Host', host(problems, options.host)],
    ['Port', port(problems, options.port ?? 9200)],
    ...tlsFields(options, problems),
    ['HTTP_User', options.httpUser],
    ['HTTP_Passwd', secret('HTTP_PASSWD', options.httpPassword)],
    ['Logstash_Format', onOff(logstash)],
    ['Logstash_Prefix', logstash ? options.logstashPrefix ?? 'logstash' : undefined],
    ['Index', logstash ? undefined : options.index ?? 'fluent-bit'],
    ['Suppress_Type_Name', onOff(options.suppressTypeName ?? true)],
    ['Replace_Dots', onOff(options.replaceDots ?? true)],
    ['Trace_Error', onOff(options.traceError ?? false)],
  ];
}

function secretRefProblems(ref: SecretKeyRefOptions): string[] {
  const problems: string[] = [];
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(ref.secretName) || ref.secretName.length > 253) {
    problems.push(`secretName ${JSON.stringify(ref.secretName)} is not a valid Secret name (DNS subdomain).`);
  }
  if (!/^[-._a-zA-Z0-9]+$/.test(ref.key) || ref.key.length > 253 || ref.key === '.' || ref.key.startsWith('..')) {
    problems.push(`Secret key ${JSON.stringify(ref.key)} must match [-._a-zA-Z0-9]+ (not "." or starting with "..").`);
  }
  return problems;
}

const SECRET_REF = t.object({ secretName: t.required(t.string('loki-credentials')), key: t.required(t.string('password')) });
const COMMON_FIELDS: PropFields = {
  match: t.string('kube.*'),
  alias: t.string('loki'),
  retryLimit: t.number(),
  storageTotalLimitSize: t.string('1G'),
};
const TLS_FIELDS: PropFields = { tls: t.boolean(), tlsVerify: t.boolean() };
const LOKI_FIELDS: PropFields = {
  ...COMMON_FIELDS,
  ...TLS_FIELDS,
  host: t.required(t.string('loki-gateway.monitoring.svc')),
  port: t.number(),
  uri: t.string('/loki/api/v1/push'),
  tenantId: t.string('team-a'),
  httpUser: t.string('user'),
  httpPassword: SECRET_REF,
  bearerToken: SECRET_REF,
  labels: t.map(t.string('fluent-bit')),
  autoKubernetesLabels: t.boolean(),
  removeKeys: t.array(t.string('stream')),
  lineFormat: t.enumOf(() => Object.values(LokiLineFormat), 'LokiLineFormat.JSON or KEY_VALUE'),
};
const SEARCH_FIELDS: PropFields = {
  ...COMMON_FIELDS,
  ...TLS_FIELDS,
  host: t.required(t.string('elasticsearch.logging.svc')),
  port: t.number(),
  index: t.string('fluent-bit'),
  logstashFormat: t.boolean(),
  logstashPrefix: t.string('logstash'),
  httpUser: t.string('elastic'),
  httpPassword: SECRET_REF,
  cloudAuth: SECRET_REF,
  cloudId: t.string('my-deployment:ZXhhbXBsZQ=='),
  suppressTypeName: t.boolean(),
  replaceDots: t.boolean(),
  traceError: t.boolean(),
};
const FORWARD_FIELDS: PropFields = {
  ...COMMON_FIELDS,
  ...TLS_FIELDS,
  host: t.required(t.string('fluentd.logging.svc')),
  port: t.number(),
  sharedKey: SECRET_REF,
  selfHostname: t.string('node'),
  username: t.string('fluent-bit'),
  password: SECRET_REF,
  requireAckResponse: t.boolean(),
};
const STDOUT_FIELDS: PropFields = {
  ...COMMON_FIELDS,
  format: t.enumOf(() => Object.values(StdoutFormat), 'StdoutFormat.MSGPACK, JSON or JSON_LINES'),
};
