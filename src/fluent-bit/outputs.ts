/**
 * Typed fluent-bit outputs (Loki, Elasticsearch/OpenSearch, forward, stdout, S3, CloudWatch Logs,
 * Kafka, HTTP, Splunk, Datadog, OpenTelemetry) and a generic one for any other plugin of the pinned version.
 *
 * Every key written below is one of the plugin's config_map keys in the fluent-bit 5.1.1
 * sources, and in 4.2.3's (see output-plugins.ts, which the tests check every helper against).
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
import { ClassicEntry, onOff, writableEntryProblem } from './classic-format';
import { ownEntry } from './input-filter-keys';
import { isOutputKey, OUTPUT_PLUGIN_NAMES, outputKeyNames } from './output-plugins';
import { OutputRenderContext, RenderedOutput, SecretEnvVar } from './rendered-output';
import { brand } from '../validation/brand';
import { ValidationError } from '../validation/errors';
import { nearestName, structProblems } from '../validation/struct-check';
import { describeValue, isPort } from '../validation/values';

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
   * every node. Not for `s3`, which buffers in its own directory (`storeDirLimitSize`).
   * @default '1G' (none for s3)
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

/** Options of the Amazon S3 output (`s3` plugin). */
export interface S3OutputOptions extends OutputCommonOptions {
  /** Bucket name. */
  readonly bucket: string;
  /** AWS region of the bucket, e.g. `eu-west-1`. */
  readonly region: string;
  /**
   * Object key format (`s3_key_format`); `$TAG`, `$UUID`, `$INDEX` and strftime fields expand.
   * @default - the plugin's default (`/fluent-bit-logs/$TAG/%Y/%m/%d/%H/%M/%S`)
   */
  readonly keyFormat?: string;
  /**
   * Size at which an object is completed (`total_file_size`).
   * @default "100M"
   */
  readonly totalFileSize?: string;
  /**
   * Time after which an object is completed even when smaller (`upload_timeout`, e.g. `10m`).
   * @default "10m"
   */
  readonly uploadTimeout?: string;
  /**
   * Compress objects with gzip (`compression gzip`).
   * @default true
   */
  readonly gzip?: boolean;
  /**
   * Upper bound of the local upload buffer (`store_dir_limit_size`, in the state directory on the
   * node). The plugin's own default is unlimited: an S3 outage would fill the node's disk.
   * @default "1G"
   */
  readonly storeDirLimitSize?: string;
  /**
   * IAM role to assume (`role_arn`). Credentials otherwise come from the pod's environment
   * (IRSA / EKS Pod Identity through the ServiceAccount, or the node role).
   * @default - none
   */
  readonly roleArn?: string;
  /**
   * S3-compatible endpoint (MinIO, Ceph), with scheme (`endpoint`).
   * @default - AWS
   */
  readonly endpoint?: string;
}

/** Options of the Amazon CloudWatch Logs output (`cloudwatch_logs` plugin). */
export interface CloudWatchLogsOutputOptions extends OutputCommonOptions {
  /** AWS region, e.g. `eu-west-1`. */
  readonly region: string;
  /** Log group (`log_group_name`). */
  readonly logGroupName: string;
  /**
   * Prefix of the log stream names; the tag is appended (`log_stream_prefix`).
   * @default "fluent-bit-"
   */
  readonly logStreamPrefix?: string;
  /**
   * Create the log group when missing (`auto_create_group`; needs `logs:CreateLogGroup`).
   * @default false
   */
  readonly autoCreateGroup?: boolean;
  /**
   * Retention of a group the plugin creates, in days (`log_retention_days`).
   * @default - never expire
   */
  readonly logRetentionDays?: number;
  /**
   * IAM role to assume (`role_arn`). Credentials otherwise come from the pod's environment.
   * @default - none
   */
  readonly roleArn?: string;
}

/** Record format of the Kafka output. */
export enum KafkaFormat {
  /** JSON. */
  JSON = 'json',
  /** MessagePack. */
  MSGPACK = 'msgpack',
  /** GELF. */
  GELF = 'gelf',
}

/** Options of the Kafka output (`kafka` plugin, librdkafka). */
export interface KafkaOutputOptions extends OutputCommonOptions {
  /** Bootstrap brokers, `host:port` each. */
  readonly brokers: string[];
  /** Topic (`topics`). */
  readonly topic: string;
  /**
   * Record format.
   * @default KafkaFormat.JSON
   */
  readonly format?: KafkaFormat;
  /**
   * Record key whose value is the message key (`message_key_field`).
   * @default - no key
   */
  readonly messageKeyField?: string;
  /**
   * librdkafka `security.protocol` (`rdkafka.security.protocol`), e.g. `SASL_SSL`.
   * @default - librdkafka's default (plaintext)
   */
  readonly securityProtocol?: string;
  /**
   * SASL mechanism (`rdkafka.sasl.mechanism`), e.g. `SCRAM-SHA-512` or `PLAIN`.
   * @default - none
   */
  readonly saslMechanism?: string;
  /**
   * SASL user name (`rdkafka.sasl.username`).
   * @default - none
   */
  readonly saslUsername?: string;
  /**
   * SASL password, from a Secret (`rdkafka.sasl.password`).
   * @default - none
   */
  readonly saslPassword?: SecretKeyRefOptions;
  /**
   * More librdkafka settings, without the `rdkafka.` prefix (e.g. `{ 'compression.codec': 'zstd' }`).
   * Never credentials: they go into the ConfigMap as they are.
   * @default - none
   */
  readonly rdkafkaOptions?: { [key: string]: string };
}

/** Body format of the HTTP output. */
export enum HttpOutputFormat {
  /** One JSON array per request. */
  JSON = 'json',
  /** One JSON object per line. */
  JSON_LINES = 'json_lines',
  /** Concatenated JSON objects. */
  JSON_STREAM = 'json_stream',
  /** MessagePack. */
  MSGPACK = 'msgpack',
  /** GELF. */
  GELF = 'gelf',
}

/** Options of the HTTP output (`http` plugin). */
export interface HttpOutputOptions extends OutputCommonOptions, OutputTlsOptions {
  /** Host name or IP, without scheme or path. */
  readonly host: string;
  /**
   * Port.
   * @default - 443 with tls, else 80
   */
  readonly port?: number;
  /**
   * Request path (`uri`).
   * @default "/"
   */
  readonly uri?: string;
  /**
   * Body format.
   * @default HttpOutputFormat.JSON_LINES
   */
  readonly format?: HttpOutputFormat;
  /**
   * Fixed request headers (not secrets: they go into the ConfigMap).
   * @default - none
   */
  readonly headers?: { [name: string]: string };
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
   * A header whose value comes from a Secret (e.g. `Authorization` with `Bearer …`).
   * @default - none
   */
  readonly secretHeader?: SecretHeaderOptions;
  /**
   * Compress bodies with gzip.
   * @default false
   */
  readonly gzip?: boolean;
}

/** An HTTP header whose value is a Secret key. */
export interface SecretHeaderOptions {
  /** Header name, e.g. `Authorization`. */
  readonly name: string;
  /** The Secret key holding the whole header value. */
  readonly value: SecretKeyRefOptions;
}

/** Options of the Splunk HTTP Event Collector output (`splunk` plugin). */
export interface SplunkOutputOptions extends OutputCommonOptions {
  /** HEC host name or IP. */
  readonly host: string;
  /**
   * HEC port.
   * @default 8088
   */
  readonly port?: number;
  /** HEC token, from a Secret (`splunk_token`). */
  readonly token: SecretKeyRefOptions;
  /**
   * Connect with TLS (HEC listens with TLS by default).
   * @default true
   */
  readonly tls?: boolean;
  /**
   * Verify the HEC certificate (only with `tls`).
   * @default true
   */
  readonly tlsVerify?: boolean;
  /**
   * Index (`event_index`).
   * @default - the token's default index
   */
  readonly index?: string;
  /**
   * Source type (`event_sourcetype`).
   * @default - the token's default
   */
  readonly sourceType?: string;
  /**
   * Source (`event_source`).
   * @default - the token's default
   */
  readonly source?: string;
}

/** Datadog site (intake host). */
export enum DatadogSite {
  /** US1 (datadoghq.com). */
  US1 = 'http-intake.logs.datadoghq.com',
  /** US3. */
  US3 = 'http-intake.logs.us3.datadoghq.com',
  /** US5. */
  US5 = 'http-intake.logs.us5.datadoghq.com',
  /** EU (datadoghq.eu). */
  EU = 'http-intake.logs.datadoghq.eu',
  /** AP1. */
  AP1 = 'http-intake.logs.ap1.datadoghq.com',
}

/** Options of the Datadog output (`datadog` plugin). */
export interface DatadogOutputOptions extends OutputCommonOptions {
  /** API key, from a Secret (`apikey`). */
  readonly apiKey: SecretKeyRefOptions;
  /**
   * Intake host.
   * @default DatadogSite.US1
   */
  readonly site?: DatadogSite;
  /**
   * Service name (`dd_service`).
   * @default - none
   */
  readonly service?: string;
  /**
   * Source (`dd_source`), e.g. `kubernetes`.
   * @default - none
   */
  readonly source?: string;
  /**
   * Tags (`dd_tags`), e.g. `['env:prod', 'team:platform']`.
   * @default - none
   */
  readonly tags?: string[];
  /**
   * Compress with gzip.
   * @default true
   */
  readonly gzip?: boolean;
}

/** Compression of the OpenTelemetry output's requests (`compress`). */
export enum OpenTelemetryCompression {
  /** gzip. */
  GZIP = 'gzip',
  /** zstd. */
  ZSTD = 'zstd',
}

/** Options of the OpenTelemetry output (`opentelemetry` plugin: OTLP/HTTP, or OTLP/gRPC). */
export interface OpenTelemetryOutputOptions extends OutputCommonOptions, OutputTlsOptions {
  /** Host name or IP of the OTLP receiver (an OpenTelemetry Collector), without scheme or path. */
  readonly host: string;
  /**
   * Port.
   * @default 4318 (OTLP/HTTP), 4317 with `grpc`
   */
  readonly port?: number;
  /**
   * Send over OTLP/gRPC (`grpc on`, which turns HTTP/2 on) instead of OTLP/HTTP.
   * @default false
   */
  readonly grpc?: boolean;
  /**
   * Path logs are posted to over OTLP/HTTP (`logs_uri`). Not with `grpc`, which posts to the plugin's gRPC path.
   * @default "/v1/logs"
   */
  readonly logsUri?: string;
  /**
   * Fixed request headers (not secrets: they go into the ConfigMap).
   * @default - none
   */
  readonly headers?: { [name: string]: string };
  /**
   * A header whose value comes from a Secret (e.g. `Authorization` with `Bearer …`).
   * @default - none
   */
  readonly secretHeader?: SecretHeaderOptions;
  /**
   * Basic-auth user name.
   * @default - no basic auth
   */
  readonly httpUser?: string;
  /**
   * Basic-auth password, from a Secret (needs `httpUser`).
   * @default - no basic auth
   */
  readonly httpPassword?: SecretKeyRefOptions;
  /**
   * Compress requests (`compress`).
   * @default - not compressed
   */
  readonly compress?: OpenTelemetryCompression;
  /**
   * Record key whose value becomes the OTLP log body (`logs_body_key`), e.g. `$log`; the other keys are
   * dropped unless the receiver reads them from elsewhere.
   * @default - the plugin's choice (the whole record)
   */
  readonly logsBodyKey?: string;
}

/** Options of an output for any plugin of the pinned fluent-bit. */
export interface CustomOutputOptions extends OutputCommonOptions {
  /** The plugin name (`Name`), e.g. `gelf` or `azure_blob`. Must be an output plugin fluent-bit 5.1 has. */
  readonly name: string;
  /**
   * Plugin keys and values (not secrets: they go into the ConfigMap). Each key must be one the
   * plugin declares (or a common output key such as `tls` or `net.keepalive`). `Name`, `Alias`,
   * `Match`, `Retry_Limit` and `storage.total_limit_size` come from the typed options.
   * @default - none
   */
  readonly options?: { [key: string]: string };
  /**
   * Plugin keys whose values come from Secrets (passed as environment variables).
   * @default - none
   */
  readonly secretOptions?: { [key: string]: SecretKeyRefOptions };
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
  /** Amazon S3 (`s3`). */
  S3 = 's3',
  /** Amazon CloudWatch Logs (`cloudwatch_logs`). */
  CLOUDWATCH_LOGS = 'cloudwatch_logs',
  /** Apache Kafka (`kafka`). */
  KAFKA = 'kafka',
  /** Any HTTP endpoint (`http`). */
  HTTP = 'http',
  /** Splunk HTTP Event Collector (`splunk`). */
  SPLUNK = 'splunk',
  /** Datadog logs intake (`datadog`). */
  DATADOG = 'datadog',
  /** An OTLP receiver (`opentelemetry`). */
  OPENTELEMETRY = 'opentelemetry',
  /** Another plugin, through `FluentBitOutput.custom()`; see `pluginName`. */
  CUSTOM = 'custom',
}

type Field = [key: string, value: string | number | boolean | undefined];
type SecretFn = (suffix: string, ref?: SecretKeyRefOptions) => string | undefined;
/** What a helper's fields may use besides Secrets: the alias and the collector's writable state directory. */
interface FieldContext {
  readonly alias: string;
  readonly stateDir: string;
  /** Declare a path the plugin writes to (it must lie under stateDir: the root filesystem is read-only). */
  readonly writePath: (path: string) => void;
}
/** Renders an output's own fields; pushes every problem (naming the option) to `problems`. */
type FieldsFn = (secret: SecretFn, problems: string[], context: FieldContext) => Field[];

/** A fluent-bit output destination. Create one with the static factories. */
export class FluentBitOutput {
  /** Ship to Grafana Loki. */
  public static loki(options: LokiOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.LOKI, options, 'LokiOutputOptions', (secret, problems) => {
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
        ['Port', httpPort(problems, options, 3100)],
        ['Uri', options.uri],
        ...tlsFields(options, problems),
        ['Tenant_ID', options.tenantId],
        ...basicAuthFields(options, secret, problems, 'loki'),
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
    return new FluentBitOutput(FluentBitOutputKind.ELASTICSEARCH, options, 'ElasticsearchOutputOptions', (secret, problems) => [
      ...searchFields(options, secret, problems, 'es'),
      ['Cloud_ID', options.cloudId === undefined ? undefined : cloudId(problems, options.cloudId)],
      ['Cloud_Auth', secret('CLOUD_AUTH', options.cloudAuth)],
    ]);
  }

  /** Ship to OpenSearch (`opensearch` plugin). */
  public static openSearch(options: ElasticsearchOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.OPENSEARCH, options, 'ElasticsearchOutputOptions', (secret, problems) => {
      if (options.cloudAuth !== undefined || options.cloudId !== undefined) {
        problems.push('cloudId/cloudAuth are Elastic Cloud options; use FluentBitOutput.elasticsearch() or remove them.');
      }
      return searchFields(options, secret, problems, 'opensearch');
    });
  }

  /** Ship to a Fluentd or fluent-bit aggregator over the forward protocol. */
  public static forward(options: ForwardOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.FORWARD, options, 'ForwardOutputOptions', (secret, problems) => [
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
    return new FluentBitOutput(FluentBitOutputKind.STDOUT, options, 'StdoutOutputOptions', () => [
      ['Format', options.format ?? StdoutFormat.JSON_LINES],
    ]);
  }

  /**
   * Ship to Amazon S3. The upload buffer (`store_dir`) is placed in the collector's state directory,
   * since the container's root filesystem is read-only.
   */
  public static s3(options: S3OutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.S3, options, 'S3OutputOptions', (_secret, problems, ctx) => {
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(options.bucket)) {
        problems.push(`bucket ${JSON.stringify(options.bucket)} is not an S3 bucket name (3-63 of a-z, 0-9, '.', '-').`);
      }
      // One buffer directory per output: two s3 outputs must not share their pending parts.
      const storeDir = `${ctx.stateDir}/s3/${ctx.alias}`;
      ctx.writePath(storeDir);
      return [
        ['bucket', options.bucket],
        ['region', awsRegion(problems, options.region)],
        ['s3_key_format', options.keyFormat],
        ['total_file_size', size(problems, 'totalFileSize', options.totalFileSize ?? '100M')],
        ['upload_timeout', duration(problems, 'uploadTimeout', options.uploadTimeout ?? '10m')],
        ['compression', options.gzip ?? true ? 'gzip' : undefined],
        ['store_dir', storeDir],
        ['store_dir_limit_size', size(problems, 'storeDirLimitSize', options.storeDirLimitSize ?? '1G')],
        ['role_arn', options.roleArn],
        ['endpoint', options.endpoint],
      ];
    });
  }

  /** Ship to Amazon CloudWatch Logs. Credentials come from the pod's environment (IRSA / Pod Identity). */
  public static cloudWatchLogs(options: CloudWatchLogsOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.CLOUDWATCH_LOGS, options, 'CloudWatchLogsOutputOptions', (_secret, problems) => {
      if (options.logRetentionDays !== undefined && !options.autoCreateGroup) {
        problems.push('logRetentionDays only applies to a group the plugin creates; set autoCreateGroup: true or remove it.');
      }
      return [
        ['region', awsRegion(problems, options.region)],
        ['log_group_name', nonEmpty(problems, 'logGroupName', options.logGroupName)],
        ['log_stream_prefix', options.logStreamPrefix ?? 'fluent-bit-'],
        ['auto_create_group', onOff(options.autoCreateGroup ?? false)],
        ['log_retention_days', options.logRetentionDays],
        ['role_arn', options.roleArn],
      ];
    });
  }

  /** Ship to Apache Kafka. */
  public static kafka(options: KafkaOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.KAFKA, options, 'KafkaOutputOptions', (secret, problems) => {
      if (options.brokers.length === 0 || options.brokers.some((b) => !/^[^\s,:/]+:[0-9]{1,5}$/.test(b))) {
        problems.push(`brokers ${JSON.stringify(options.brokers)} must be a non-empty list of host:port.`);
      }
      const rdkafka = options.rdkafkaOptions ?? {};
      for (const key of Object.keys(rdkafka)) {
        // librdkafka property names: lower-case words joined by "." and "_" (they become one config key).
        if (!/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/.test(key)) {
          problems.push(`rdkafkaOptions key ${JSON.stringify(key)} is not a librdkafka property name (lower-case words joined by "." or "_", e.g. "compression.codec").`);
          continue;
        }
        if (/^(sasl\.(username|password|mechanisms?)|security\.protocol)$/.test(key) || /password|secret/i.test(key)) {
          problems.push(`rdkafkaOptions.${key} is set through a typed option (securityProtocol, saslMechanism, saslUsername, saslPassword from a Secret); remove it.`);
        }
      }
      return [
        ['brokers', options.brokers.join(',')],
        ['topics', nonEmpty(problems, 'topic', options.topic)],
        ['format', options.format ?? KafkaFormat.JSON],
        ['message_key_field', options.messageKeyField],
        ['rdkafka.security.protocol', options.securityProtocol],
        ['rdkafka.sasl.mechanism', options.saslMechanism],
        ['rdkafka.sasl.username', options.saslUsername],
        ['rdkafka.sasl.password', secret('SASL_PASSWORD', options.saslPassword)],
        ...Object.keys(rdkafka).sort().map((k): Field => [`rdkafka.${k}`, rdkafka[k]]),
      ];
    });
  }

  /** Send records to an HTTP endpoint. */
  public static http(options: HttpOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.HTTP, options, 'HttpOutputOptions', (secret, problems) => [
      ['Host', host(problems, options.host)],
      ['Port', httpPort(problems, options, options.tls ? 443 : 80)],
      ['URI', options.uri ?? '/'],
      ['Format', options.format ?? HttpOutputFormat.JSON_LINES],
      ...tlsFields(options, problems),
      ...basicAuthFields(options, secret, problems, 'http'),
      ...headerFields(options, secret, problems),
      ['Compress', options.gzip ? 'gzip' : undefined],
    ]);
  }

  /**
   * Ship to an OTLP receiver (an OpenTelemetry Collector) over OTLP/HTTP, or OTLP/gRPC with `grpc`.
   * Every key written is one of plugins/out_opentelemetry's config_map in fluent-bit 5.1.1.
   */
  public static openTelemetry(options: OpenTelemetryOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.OPENTELEMETRY, options, 'OpenTelemetryOutputOptions', (secret, problems) => {
      const grpc = options.grpc ?? false;
      if (options.logsUri !== undefined && grpc) {
        problems.push('logsUri is the OTLP/HTTP path; with grpc the plugin posts to grpc_logs_uri (the OTLP service path) instead: remove logsUri.');
      } else if (options.logsUri !== undefined && !/^\/\S*$/.test(options.logsUri)) {
        problems.push(`logsUri ${JSON.stringify(options.logsUri)} must be a path starting with /, e.g. "/v1/logs".`);
      }
      if (options.logsBodyKey !== undefined) recordKey(problems, 'logsBodyKey', options.logsBodyKey);
      return [
        ['Host', host(problems, options.host)],
        ['Port', httpPort(problems, options, grpc ? 4317 : 4318)],
        ...tlsFields(options, problems),
        // opentelemetry_conf.c turns HTTP/2 on when grpc is on and http2 is not set.
        ['grpc', grpc ? 'On' : undefined],
        ['logs_uri', grpc ? undefined : options.logsUri ?? '/v1/logs'],
        ...basicAuthFields(options, secret, problems, 'opentelemetry'),
        ...headerFields(options, secret, problems),
        ['compress', options.compress],
        ['logs_body_key', options.logsBodyKey],
      ];
    });
  }

  /** Ship to a Splunk HTTP Event Collector. */
  public static splunk(options: SplunkOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.SPLUNK, options, 'SplunkOutputOptions', (secret, problems) => [
      ['Host', host(problems, options.host)],
      ['Port', port(problems, options.port ?? 8088)],
      ...tlsFields({ tls: options.tls ?? true, tlsVerify: options.tls === false ? options.tlsVerify : options.tlsVerify ?? true }, problems),
      ['Splunk_Token', secret('TOKEN', options.token)],
      ['event_index', options.index],
      ['event_sourcetype', options.sourceType],
      ['event_source', options.source],
    ]);
  }

  /** Ship to Datadog's logs intake (always TLS on 443). */
  public static datadog(options: DatadogOutputOptions): FluentBitOutput {
    return new FluentBitOutput(FluentBitOutputKind.DATADOG, options, 'DatadogOutputOptions', (secret, problems) => {
      for (const tag of options.tags ?? []) {
        if (!/^[^\s,]+$/.test(tag)) {
          problems.push(`tag ${JSON.stringify(tag)} must have no spaces or commas.`);
        }
      }
      return [
        ['Host', options.site ?? DatadogSite.US1],
        ['Port', 443],
        ['tls', 'On'],
        ['tls.verify', 'On'],
        ['apikey', secret('APIKEY', options.apiKey)],
        ['dd_service', options.service],
        ['dd_source', options.source],
        ['dd_tags', options.tags && options.tags.length > 0 ? options.tags.join(',') : undefined],
        ['compress', options.gzip ?? true ? 'gzip' : undefined],
      ];
    });
  }

  /**
   * Any output plugin of the pinned fluent-bit, with its keys as given. The plugin name and every
   * key are checked against the plugin list and config_map keys of fluent-bit 5.1.1 (and 4.2.3's with a 4.x image); values are
   * written as they are (only Secret-backed ones become `${ENV}` references).
   */
  public static custom(options: CustomOutputOptions): FluentBitOutput {
    // Read defensively: with wrong types (JavaScript, parsed YAML) the constructor reports them.
    const name = typeof options?.name === 'string' ? options.name : FluentBitOutputKind.CUSTOM;
    return new FluentBitOutput(FluentBitOutputKind.CUSTOM, options, 'CustomOutputOptions', (secret, problems) => {
      if (!OUTPUT_PLUGIN_NAMES.includes(name)) {
        const close = ownEntry(OUTPUT_NAME_HINTS, name.toLowerCase())
          ?? OUTPUT_PLUGIN_NAMES.filter((n) => n.startsWith(name.slice(0, 3).toLowerCase()));
        problems.push(`fluent-bit 5.1 has no output plugin ${JSON.stringify(name)}`
          + `${close.length > 0 ? ` (did you mean ${close.join(', ')}?)` : ''}; its output plugins are ${OUTPUT_PLUGIN_NAMES.join(', ')}.`);
        return [];
      }
      const plain = options.options ?? {};
      const secrets = options.secretOptions ?? {};
      const seen = new Set<string>();
      for (const key of [...Object.keys(plain), ...Object.keys(secrets)]) {
        const k = key.toLowerCase();
        if (RESERVED_CUSTOM_KEYS.includes(k)) {
          problems.push(`options key ${JSON.stringify(key)} comes from the typed options (name, alias, match, retryLimit, storageTotalLimitSize); remove it from options.`);
          continue;
        }
        if (seen.has(k)) {
          problems.push(`key ${JSON.stringify(key)} is given twice (keys compare case-insensitively; options and secretOptions share them).`);
          continue;
        }
        seen.add(k);
        if (Object.prototype.hasOwnProperty.call(plain, key) && isCredentialKey(k, plain[key])) {
          problems.push(`options key ${JSON.stringify(key)} holds a credential, which would be written into the ConfigMap (readable by whoever `
            + `reads ConfigMaps in the namespace, and by everyone with the repository); give it as secretOptions: { ${JSON.stringify(key)}: `
            + '{ secretName, key } } (the pod reads it from the Secret).');
          continue;
        }
        if (!isOutputKey(name, key)) {
          const near = nearestName(k, outputKeyNames(name));
          problems.push(`the ${name} plugin of fluent-bit 5.1 has no key ${JSON.stringify(key)}; `
            + `${near !== undefined ? `did you mean ${near}?` : 'check the spelling against the plugin\'s documentation.'}`);
          continue;
        }
        problems.push(...writableEntryProblems(key, plain[key] ?? 'secret'));
      }
      return [
        ...Object.keys(plain).sort().map((k): Field => [k, plain[k]]),
        ...Object.keys(secrets).sort().map((k): Field => [k, secret(k.toUpperCase().replace(/[^A-Z0-9]/g, '_'), secrets[k])]),
      ];
    }, name);
  }

  /** Which factory made this output (CUSTOM for `custom()`). */
  public readonly kind: FluentBitOutputKind;
  /** The fluent-bit plugin name written as `Name`. */
  public readonly pluginName: string;
  /** The alias given in the options, if any. */
  public readonly alias?: string;
  /** Tag pattern of the records it receives. */
  public readonly match: string;

  private readonly common: OutputCommonOptions;
  private readonly fields: FieldsFn;
  private readonly problems: string[];

  private constructor(
    kind: FluentBitOutputKind, options: OutputCommonOptions, optionsStruct: string, fields: FieldsFn, pluginName: string = kind,
  ) {
    this.kind = kind;
    this.pluginName = pluginName;
    // Wrong types (JavaScript, parsed YAML) become problems like any other; nothing is thrown here,
    // so the collector using the output reports every problem with its own path.
    const typeProblems = typeof options === 'object' && options !== null && !Array.isArray(options)
      ? structProblems('', options as unknown as { [key: string]: unknown }, optionsStruct).map((m) => m.replace(/^prop /, ''))
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
      if (common.storageTotalLimitSize !== undefined && pluginName === 's3') {
        problems.push('storageTotalLimitSize does not bound the s3 output: it buffers in its own store_dir (fluent-bit asks for '
          + '\'store_dir_limit_size\' instead of \'storage.total_limit_size\'); use storeDirLimitSize.');
      } else if (common.storageTotalLimitSize !== undefined && !SIZE_PATTERN.test(common.storageTotalLimitSize)) {
        problems.push(`storageTotalLimitSize ${JSON.stringify(common.storageTotalLimitSize)} must be a fluent-bit size such as '512M' or '2G'.`);
      }
      // The fields are pure: rendering them once with placeholder secrets and a placeholder
      // context finds every problem now.
      fields((_suffix, ref) => {
        if (ref !== undefined) problems.push(...secretRefProblems(ref));
        return '${PLACEHOLDER}';
      }, problems, { alias: common.alias ?? pluginName, stateDir: DEFAULT_STATE_DIR, writePath: () => undefined });
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
   * The options given as strings, and the strings of the options that map names to strings, by name, sorted (for
   * checks that name the option, e.g. an unset `${VAR}` in `host` or in `labels["cluster"]`).
   * @internal
   */
  public _stringOptions(): Array<[string, string]> {
    const options = this.common as { [key: string]: unknown };
    return Object.keys(options).sort().flatMap((k): Array<[string, string]> => {
      const value = options[k];
      if (typeof value === 'string') return [[k, value]];
      // one level down: maps of strings such as a Loki output's labels or an HTTP output's headers
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
      return Object.entries(value).sort().flatMap(([key, v]): Array<[string, string]> => (typeof v === 'string' ? [[`${k}[${JSON.stringify(key)}]`, v]] : []));
    });
  }

  /**
   * The `[OUTPUT]` entries for this output under `alias`, the Secret-backed environment variables
   * they reference and the paths the plugin writes. Throws when the options have problems.
   * @internal
   */
  public _render(alias: string, context: OutputRenderContext = { stateDir: DEFAULT_STATE_DIR }): RenderedOutput {
    if (this.problems.length > 0) {
      throw new ValidationError(`FluentBitOutput ${this.kind}`, this.problems.join('; '));
    }
    const secretEnv: SecretEnvVar[] = [];
    const writePaths: string[] = [];
    const secret = (suffix: string, ref?: SecretKeyRefOptions): string | undefined => {
      if (ref === undefined) {
        return undefined;
      }
      const envName = `FLB_${alias.toUpperCase().replace(/-/g, '_')}_${suffix}`;
      secretEnv.push({ envName, secretName: ref.secretName, key: ref.key });
      return '${' + envName + '}';
    };
    const fields: Field[] = [
      ['Name', this.pluginName],
      ['Alias', alias],
      ['Match', this.match],
      ...this.fields(secret, [], { alias, stateDir: context.stateDir, writePath: (path) => writePaths.push(path) }),
      ['Retry_Limit', this.common.retryLimit ?? 'no_limits'],
      // s3 keeps what it has not uploaded in its own store_dir, bounded by store_dir_limit_size; it
      // warns at start to use that instead (plugins/out_s3/s3.c, cb_s3_init).
      ['storage.total_limit_size', this.pluginName === 's3' ? undefined : this.common.storageTotalLimitSize ?? '1G'],
    ];
    const entries: ClassicEntry[] = [];
    for (const [key, value] of fields) {
      if (value !== undefined) {
        entries.push({ key, value: typeof value === 'boolean' ? onOff(value) : String(value) });
      }
    }
    return { entries, secretEnv, writePaths };
  }
}
brand(FluentBitOutput, 'FluentBitOutput');

/** The collector's state directory when `_render` is called without a context (tests). */
const DEFAULT_STATE_DIR = '/var/lib/log-collector';

const ALIAS_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$/;
const SIZE_PATTERN = /^[0-9]+(\.[0-9]+)?([KMG]B?)?$/i;

/** flb record accessor: `$key` then `['sub']` / `[0]` (src/record_accessor/ra.l); no commas, the list is comma-separated. */
const RECORD_ACCESSOR = /^\$[_A-Za-z][A-Za-z0-9_.\-/]*(\[('([^',]|'')*'|[0-9]+)\])*$/;
const TOP_LEVEL_KEY = /^[^\s$,\[\]'"]+$/;

/** Names people reach for that fluent-bit spells otherwise. */
const OUTPUT_NAME_HINTS: { [name: string]: string[] } = {
  elasticsearch: ['es'],
  cloudwatch: ['cloudwatch_logs'],
  kinesis: ['kinesis_firehose', 'kinesis_streams'],
  otel: ['opentelemetry'],
  otlp: ['opentelemetry'],
  newrelic: ['nrlogs'],
  google: ['stackdriver'],
  gcp: ['stackdriver'],
  postgres: ['pgsql'],
  graylog: ['gelf'],
};

/** Keys of a custom output that the typed options write. */
const RESERVED_CUSTOM_KEYS = ['name', 'alias', 'match', 'retry_limit', 'storage.total_limit_size'];

/**
 * An Elastic Cloud id as plugins/out_es/es_conf.c (extract_cloud_host) reads it: `<name>:` then
 * base64 of `<region>$<es host>[:<port>]$<kibana id>`, decoded into 256 bytes and split on `$`
 * (strtok: empty parts skipped); the host becomes `<es host>.<region>[:<port>]`, at most 255
 * characters. Anything else makes every collector exit at start ("cannot extract cloud_host").
 */
function cloudId(problems: string[], value: string): string {
  const bad = (why: string) => problems.push(`cloudId ${JSON.stringify(value)} is not an Elastic Cloud id (${why}); `
    + 'copy it from the deployment\'s page, e.g. "my-deployment:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRhYmMxMjMkZGVmNDU2".');
  const colon = value.indexOf(':');
  const encoded = colon < 0 ? '' : value.slice(colon + 1);
  if (colon < 0) {
    bad('no \':\' after the deployment name');
  } else if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(encoded)) {
    bad('the part after \':\' is not base64');
  } else {
    const decoded = Buffer.from(encoded, 'base64').toString('latin1');
    const parts = decoded.split('$').filter((p) => p !== '');
    const [region, hostPort] = parts;
    const [esHost, esPort] = (hostPort ?? '').split(/:(.*)/s);
    if (decoded.length > 255) {
      bad('it decodes to more than 255 bytes');
    } else if (parts.length < 2) {
      bad('it decodes to no <region>$<host> pair');
    } else if (`${esHost}.${region}${esPort === undefined ? '' : `:${esPort}`}`.length > 255) {
      bad('the host it names is longer than 255 characters');
    } else if (esPort !== undefined && !/^[0-9]{1,5}$/.test(esPort)) {
      bad(`the port ${JSON.stringify(esPort)} it names is not a number`);
    }
  }
  return value;
}

function awsRegion(problems: string[], value: string): string {
  if (!/^[a-z]{2}(-[a-z]+)+-[0-9]$/.test(value)) {
    problems.push(`region ${JSON.stringify(value)} is not an AWS region such as 'eu-west-1'.`);
  }
  return value;
}

function nonEmpty(problems: string[], prop: string, value: string): string {
  if (!/^\S+$/.test(value)) {
    problems.push(`${prop} ${JSON.stringify(value)} must be non-empty without spaces.`);
  }
  return value;
}

function size(problems: string[], prop: string, value: string): string {
  if (!SIZE_PATTERN.test(value)) {
    problems.push(`${prop} ${JSON.stringify(value)} must be a fluent-bit size such as '50M'.`);
  }
  return value;
}

function duration(problems: string[], prop: string, value: string): string {
  if (!/^[0-9]+[smhd]?$/.test(value)) {
    problems.push(`${prop} ${JSON.stringify(value)} must be a fluent-bit time such as '10m' or '60s'.`);
  }
  return value;
}

/** The classic-mode checks of a custom key and value, as problems. */
function writableEntryProblems(key: string, value: string): string[] {
  const problem = writableEntryProblem('OUTPUT', key, value);
  return problem === undefined ? [] : [problem];
}

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

/**
 * The port of an output that speaks HTTP, refused when it is 443 without tls: plain HTTP to an HTTPS
 * port, which the server answers with a TLS alert or a 400, so every flush fails and is retried.
 */
function httpPort(problems: string[], options: OutputTlsOptions & { readonly port?: number }, defaultPort: number): number {
  const value = port(problems, options.port ?? defaultPort);
  if (value === 443 && !options.tls) {
    problems.push('port 443 without tls: fluent-bit would speak plain HTTP to an HTTPS port, and every flush would fail; set tls: true '
      + '(and tlsVerify, true by default), or give the plain-HTTP port.');
  }
  return value;
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

function searchFields(options: ElasticsearchOutputOptions, secret: SecretFn, problems: string[], plugin: string): Field[] {
  const logstash = options.logstashFormat ?? true;
  if (logstash && options.index !== undefined) {
    problems.push('index is ignored with logstashFormat (the default); set logstashFormat: false or use logstashPrefix.');
  }
  return [
    ['Host', host(problems, options.host)],
    ['Port', httpPort(problems, options, 9200)],
    ...tlsFields(options, problems),
    ...basicAuthFields(options, secret, problems, plugin),
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


/**
 * Keys of the output plugins whose value is a credential (read from output-plugins.ts's lists): a
 * password, a token, an API or shared key, a client secret, a private key's passphrase, a Slack
 * webhook URL (its path is the token), an Elastic Cloud `user:password`, td's API key.
 */
const CREDENTIAL_KEYS: readonly string[] = [
  'api', 'api_key', 'apikey', 'auth_token', 'authorization_endpoint_bearer_token', 'authorization_endpoint_password', 'bearer_token',
  'client_secret', 'cloud_auth', 'configuration_endpoint_bearer_token', 'configuration_endpoint_password', 'http_api_key', 'http_passwd',
  'http_token', 'license_key', 'oauth2.client_secret', 'password', 'sas_token', 'service_account_secret', 'shared_key', 'splunk_token',
  'tls.key_passwd', 'webhook',
];

/** Whether a plain custom option would put a credential into the ConfigMap (a known key, a librdkafka secret, an Authorization header). */
function isCredentialKey(key: string, value: string): boolean {
  return CREDENTIAL_KEYS.includes(key)
    || (key.startsWith('rdkafka.') && /password|secret/.test(key))
    || (key === 'header' && /^\s*(proxy-)?authorization\s/i.test(value));
}

/** Options with basic auth. */
interface BasicAuthOptions {
  readonly httpUser?: string;
  readonly httpPassword?: SecretKeyRefOptions;
}

/**
 * HTTP_User and HTTP_Passwd. A password without a user sends no credentials: out_es (es.c: only
 * when http_user is set), out_opensearch, out_loki, out_http and out_opentelemetry add basic auth only
 * when http_user is set, and every one of them leaves it unset by default.
 */
function basicAuthFields(options: BasicAuthOptions, secret: SecretFn, problems: string[], plugin: string): Field[] {
  if (options.httpPassword !== undefined && options.httpUser === undefined) {
    problems.push(`httpPassword is set without httpUser: the ${plugin} plugin adds basic auth only with a user, so it would send no credentials; `
      + 'set httpUser (or remove httpPassword).');
  }
  if (options.httpUser !== undefined && options.httpPassword === undefined) {
    problems.push(`httpUser ${JSON.stringify(options.httpUser)} is set without httpPassword: the ${plugin} plugin would send HTTP_User without a password `
      + '(basic auth with an empty password, refused by the server); set httpPassword: { secretName, key } (the password from a Secret), or remove httpUser.');
  }
  return [
    ['HTTP_User', options.httpUser],
    ['HTTP_Passwd', secret('HTTP_PASSWD', options.httpPassword)],
  ];
}

/** Options with request headers. */
interface HeaderOptions {
  readonly headers?: { [name: string]: string };
  readonly secretHeader?: SecretHeaderOptions;
}

/**
 * `Header Name value` lines: a name of letters, digits and '-'; a value on one line, not empty, without
 * leading or trailing whitespace (fluent-bit splits the line at the first space and trims the value).
 * An Authorization header is a credential: only as secretHeader.
 */
function headerFields(options: HeaderOptions, secret: SecretFn, problems: string[]): Field[] {
  const headers = options.headers ?? {};
  const names = Object.keys(headers).sort();
  for (const name of [...names, ...(options.secretHeader ? [options.secretHeader.name] : [])]) {
    if (!/^[A-Za-z0-9-]+$/.test(name)) {
      problems.push(`header name ${JSON.stringify(name)} must be letters, digits and '-'.`);
    }
  }
  for (const name of names) {
    const value = headers[name];
    if (/^authorization$/i.test(name)) {
      problems.push('the Authorization header is a credential; give it as secretHeader (from a Secret), not in headers.');
    } else if (typeof value === 'string' && (value.trim() === '' || value.trim() !== value || /[\r\n]/.test(value))) {
      problems.push(`headers[${JSON.stringify(name)}] value ${JSON.stringify(value)} must be one non-empty line without leading or trailing whitespace `
        + '(fluent-bit would trim it or split the config line); remove the spaces or the header.');
    }
  }
  return [
    // `header` repeats: one line per header, "Name value".
    ...names.map((k): Field => ['Header', `${k} ${headers[k]}`]),
    ...(options.secretHeader ? [['Header', `${options.secretHeader.name} ${secret('HEADER', options.secretHeader.value)}`] as Field] : []),
  ];
}
