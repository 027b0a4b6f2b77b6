/**
 * The output plugins of the pinned fluent-bit (5.1.1) and the keys each one's config_map
 * declares, read from the 5.1.1 sources: the `.name` of every `plugins/out_* /` plugin struct and
 * every `FLB_CONFIG_MAP_*` entry of its `.c` files (lower-cased: fluent-bit compares keys
 * case-insensitively), with the entries the AWS credential macro of
 * include/fluent-bit/flb_aws_credentials.h (FLB_AWS_CREDENTIAL_BASE_CONFIG_MAP) adds to out_http,
 * out_opentelemetry and out_prometheus_remote_write (`aws_region`, `aws_profile`, ...), skipping
 * entries under an `#ifdef` the release image does not define.
 * The image is built by dockerfiles/Dockerfile with CMakeLists.txt defaults otherwise: no
 * FLB_AVRO_ENCODER (so none of out_kafka's `schema_*`, `schema.registry.*` and
 * `serializer.framing` keys), no FLB_OUT_RETRY (out_retry, a test plugin), no Windows.
 * A key ending in `.` is a prefix (e.g. kafka's `rdkafka.`, passed through to librdkafka).
 * `out_zig_demo` is left out: it is a build demo, not in the release image.
 *
 * Pure data: no cdk8s import.
 */

/**
 * Keys every output accepts: the ones fluent-bit 5.1.1 src/flb_output.c flb_output_set_property
 * handles itself (its `prop_key_check` names, in a Linux build with TLS and regex support; the
 * `tls.windows.*` ones are compiled on Windows only, `_debug.http.*` in developer builds only).
 * Any other key is checked against the plugin's own config_map and refused when not in it.
 */
export const OUTPUT_COMMON_KEYS: readonly string[] = [
  'alias', 'host', 'ipv6', 'log_level', 'log_suppress_interval', 'match', 'match_regex', 'name', 'port',
  'retry_limit', 'storage.total_limit_size', 'tls', 'tls.ca_file', 'tls.ca_path', 'tls.ciphers', 'tls.crt_file',
  'tls.debug', 'tls.key_file', 'tls.key_passwd', 'tls.max_version', 'tls.min_version', 'tls.proxy.ca_file',
  'tls.proxy.ca_path', 'tls.proxy.verify', 'tls.proxy.verify_hostname', 'tls.verify', 'tls.verify_hostname',
  'tls.vhost', 'workers',
];

/**
 * `net.*` keys every output accepts: flb_output_set_property sets every key starting with `net.`
 * aside and checks them against the upstream's config_map (fluent-bit 5.1.1 src/flb_upstream.c,
 * `upstream_net`; the same in 4.2.3).
 */
export const OUTPUT_NET_KEYS: readonly string[] = [
  'net.connect_timeout', 'net.connect_timeout_log_error', 'net.dns.mode', 'net.dns.prefer_ipv4', 'net.dns.prefer_ipv6',
  'net.dns.resolver', 'net.io_timeout', 'net.keepalive', 'net.keepalive_idle_timeout', 'net.keepalive_max_recycle',
  'net.max_worker_connections', 'net.proxy_env_ignore', 'net.source_address', 'net.tcp_keepalive',
  'net.tcp_keepalive_interval', 'net.tcp_keepalive_probes', 'net.tcp_keepalive_time',
];

/**
 * `oauth2*` keys every output accepts: in 5.1.1 flb_output_set_property sets every key starting
 * with `oauth2` aside and checks them against src/flb_oauth2.c `oauth2_config_map` (out_http and
 * out_opentelemetry read them; any other output accepts and ignores them).
 */
export const OUTPUT_OAUTH2_KEYS: readonly string[] = [
  'oauth2.audience', 'oauth2.auth_method', 'oauth2.client_id', 'oauth2.client_secret', 'oauth2.connect_timeout',
  'oauth2.enable', 'oauth2.jwt_aud', 'oauth2.jwt_cert_file', 'oauth2.jwt_header', 'oauth2.jwt_key_file',
  'oauth2.jwt_ttl_seconds', 'oauth2.refresh_skew_seconds', 'oauth2.resource', 'oauth2.scope', 'oauth2.timeout',
  'oauth2.token_url', 'oauth2.user_agent',
];

/**
 * Outputs that serve HTTP themselves (flag FLB_OUTPUT_HTTP_SERVER in 5.1.1) and the server keys
 * they take besides their own: src/http_server/flb_http_server_config_map.c
 * `flb_http_server_config_map` (`workers` is a common key already).
 */
export const OUTPUT_HTTP_SERVER_PLUGINS: readonly string[] = ['prometheus_exporter', 'vivo_exporter'];
export const OUTPUT_HTTP_SERVER_KEYS: readonly string[] = [
  'buffer_chunk_size', 'buffer_max_size', 'http2', 'http_server.buffer_chunk_size', 'http_server.buffer_max_size',
  'http_server.http2', 'http_server.idle_timeout', 'http_server.ingress_queue_byte_limit',
  'http_server.ingress_queue_event_limit', 'http_server.max_connections', 'http_server.workers', 'max_connections',
];

/** Output plugin name → its own config_map keys. */
export const OUTPUT_PLUGIN_KEYS: { readonly [plugin: string]: readonly string[] } = {
  'azure': ['customer_id', 'log_type', 'log_type_key', 'shared_key', 'time_generated', 'time_key'],
  'azure_blob': ['account_name', 'auth_type', 'auto_create_container', 'azure_blob_buffer_key', 'blob_type', 'blob_uri_length', 'buffer_dir', 'buffer_file_delete_early', 'buffering_enabled', 'compress', 'compress_blob', 'configuration_endpoint_bearer_token', 'configuration_endpoint_password', 'configuration_endpoint_url', 'configuration_endpoint_username', 'container_name', 'database_file', 'date_key', 'delete_on_max_upload_error', 'emulator_mode', 'endpoint', 'file_delivery_attempt_limit', 'io_timeout', 'part_delivery_attempt_limit', 'part_size', 'path', 'sas_token', 'scheduler_max_retries', 'shared_key', 'store_dir_limit_size', 'unify_tag', 'upload_file_size', 'upload_part_freshness_limit', 'upload_parts_timeout', 'upload_timeout'],
  'azure_kusto': ['auth_type', 'azure_kusto_buffer_key', 'blob_uri_length', 'buffer_dir', 'buffer_file_delete_early', 'buffering_enabled', 'client_id', 'client_secret', 'compression_enabled', 'database_name', 'delete_on_max_upload_error', 'include_tag_key', 'include_time_key', 'ingestion_endpoint', 'ingestion_endpoint_connect_timeout', 'ingestion_mapping_reference', 'ingestion_resources_refresh_interval', 'io_timeout', 'log_key', 'scheduler_max_retries', 'store_dir_limit_size', 'table_name', 'tag_key', 'tenant_id', 'time_key', 'unify_tag', 'upload_file_size', 'upload_timeout', 'workload_identity_token_file'],
  'azure_logs_ingestion': ['auth_url', 'client_id', 'client_secret', 'compress', 'dce_url', 'dcr_id', 'table_name', 'tenant_id', 'time_generated', 'time_key'],
  'bigquery': ['aws_region', 'dataset_id', 'enable_identity_federation', 'google_service_account', 'google_service_credentials', 'ignore_unknown_values', 'pool_id', 'project_id', 'project_number', 'provider_id', 'service_account_email', 'service_account_secret', 'skip_invalid_rows', 'table_id'],
  'calyptia': ['add_label', 'api_key', 'cloud_host', 'cloud_port', 'fleet_id', 'machine_id', 'pipeline_id', 'register_retry_on_flush', 'store_path'],
  'chronicle': ['customer_id', 'google_service_credentials', 'label', 'log_key', 'log_type', 'namespace', 'namespace_key', 'project_id', 'region', 'service_account_email', 'service_account_secret'],
  'cloudwatch_logs': ['add_entity', 'auto_create_group', 'auto_retry_requests', 'endpoint', 'external_id', 'extra_user_agent', 'log_format', 'log_group_class', 'log_group_name', 'log_group_template', 'log_key', 'log_retention_days', 'log_stream_name', 'log_stream_prefix', 'log_stream_template', 'metric_dimensions', 'metric_namespace', 'profile', 'region', 'role_arn', 'sts_endpoint'],
  'counter': [],
  'datadog': ['apikey', 'compress', 'dd_hostname', 'dd_message_key', 'dd_service', 'dd_source', 'dd_tags', 'header', 'include_tag_key', 'json_date_key', 'provider', 'proxy', 'tag_key'],
  'es': ['aws_auth', 'aws_external_id', 'aws_profile', 'aws_region', 'aws_role_arn', 'aws_service_name', 'aws_sts_endpoint', 'buffer_size', 'cloud_auth', 'cloud_id', 'compress', 'current_time_index', 'generate_id', 'http_api_key', 'http_passwd', 'http_user', 'id_key', 'include_tag_key', 'index', 'logstash_dateformat', 'logstash_format', 'logstash_prefix', 'logstash_prefix_key', 'logstash_prefix_separator', 'path', 'pipeline', 'replace_dots', 'suppress_type_name', 'tag_key', 'time_key', 'time_key_format', 'time_key_nanos', 'trace_error', 'trace_output', 'type', 'upstream', 'write_operation'],
  'exit': ['flush_count', 'record_count', 'time_count'],
  'file': ['csv_column_names', 'delimiter', 'enable_strftime', 'fallback_file', 'fallback_path', 'file', 'format', 'label_delimiter', 'max_dynamic_files', 'mkdir', 'on_limit_reached', 'on_missing_field', 'path', 'rotate', 'rotate_gzip', 'rotate_max_files', 'rotate_max_size', 'template'],
  'flowcounter': ['event_based', 'unit'],
  'forward': ['add_option', 'compress', 'empty_shared_key', 'fluentd_compat', 'password', 'require_ack_response', 'retain_metadata_in_forward_mode', 'self_hostname', 'send_options', 'shared_key', 'tag', 'time_as_integer', 'unix_path', 'upstream', 'username'],
  'gcs': ['bucket', 'canned_acl', 'compression', 'content_type', 'gcs_key_format', 'gcs_key_format_tag_delimiters', 'google_service_credentials', 'preserve_data_ordering', 'send_content_md5', 'static_file_path', 'store_chunk_limit', 'store_dir', 'store_dir_limit_size', 'upload_timeout'],
  'gelf': ['compress', 'gelf_full_message_key', 'gelf_host_key', 'gelf_level_key', 'gelf_short_message_key', 'gelf_tag_key', 'gelf_timestamp_key', 'mode', 'packet_size'],
  'http': ['allow_duplicated_headers', 'aws_auth', 'aws_external_id', 'aws_profile', 'aws_region', 'aws_role_arn', 'aws_service', 'aws_sts_endpoint', 'body_key', 'compress', 'format', 'gelf_full_message_key', 'gelf_host_key', 'gelf_level_key', 'gelf_short_message_key', 'gelf_timestamp_key', 'header', 'header_tag', 'headers_key', 'http.read_idle_timeout', 'http.response_timeout', 'http_method', 'http_passwd', 'http_user', 'json_date_format', 'json_date_key', 'log_response_payload', 'oauth2.audience', 'oauth2.auth_method', 'oauth2.client_id', 'oauth2.client_secret', 'oauth2.connect_timeout', 'oauth2.enable', 'oauth2.jwt_aud', 'oauth2.jwt_cert_file', 'oauth2.jwt_header', 'oauth2.jwt_key_file', 'oauth2.jwt_ttl_seconds', 'oauth2.refresh_skew_seconds', 'oauth2.resource', 'oauth2.scope', 'oauth2.timeout', 'oauth2.token_url', 'oauth2.user_agent', 'proxy', 'uri'],
  'influxdb': ['add_integer_suffix', 'auto_tags', 'bucket', 'database', 'http_header', 'http_passwd', 'http_token', 'http_user', 'org', 'sequence_tag', 'tag_keys', 'uri'],
  'kafka': ['aws_msk_iam', 'aws_msk_iam_cluster_arn', 'brokers', 'client_id', 'dynamic_topic', 'format', 'gelf_full_message_key', 'gelf_host_key', 'gelf_level_key', 'gelf_short_message_key', 'gelf_timestamp_key', 'group_id', 'message_key', 'message_key_field', 'otlp_logs_partition_by_resource', 'queue_full_retries', 'raw_log_key', 'rdkafka.', 'timestamp_format', 'timestamp_key', 'topic_key', 'topics'],
  'kafka-rest': ['avro_http_header', 'include_tag_key', 'message_key', 'partition', 'tag_key', 'time_key', 'time_key_format', 'topic', 'url_path'],
  'kinesis_firehose': ['auto_retry_requests', 'compression', 'delivery_stream', 'endpoint', 'external_id', 'log_key', 'profile', 'region', 'role_arn', 'simple_aggregation', 'sts_endpoint', 'time_key', 'time_key_format'],
  'kinesis_streams': ['auto_retry_requests', 'compression', 'endpoint', 'external_id', 'log_key', 'profile', 'region', 'role_arn', 'simple_aggregation', 'stream', 'sts_endpoint', 'time_key', 'time_key_format'],
  'lib': ['data_mode', 'format', 'max_records'],
  'logdna': ['api_key', 'app', 'exclude_promoted_keys', 'file', 'hostname', 'ip', 'logdna_endpoint', 'logdna_host', 'logdna_port', 'mac', 'tags'],
  'loki': ['auto_kubernetes_labels', 'bearer_token', 'buffer_size', 'compress', 'drop_single_key', 'header', 'http_passwd', 'http_user', 'label_keys', 'label_map_path', 'labels', 'line_format', 'remove_keys', 'structured_metadata', 'structured_metadata_map_keys', 'tenant_id', 'tenant_id_key', 'tenant_id_key_error_handling', 'uri'],
  'nats': [],
  'nrlogs': ['api_key', 'base_uri', 'compress', 'license_key'],
  'null': ['format', 'json_date_format', 'json_date_key'],
  'opensearch': ['aws_auth', 'aws_external_id', 'aws_profile', 'aws_region', 'aws_role_arn', 'aws_service_name', 'aws_sts_endpoint', 'buffer_size', 'compress', 'current_time_index', 'generate_id', 'http_passwd', 'http_user', 'id_key', 'include_tag_key', 'index', 'logstash_dateformat', 'logstash_format', 'logstash_prefix', 'logstash_prefix_key', 'logstash_prefix_separator', 'path', 'pipeline', 'replace_dots', 'suppress_type_name', 'tag_key', 'time_key', 'time_key_format', 'time_key_nanos', 'trace_error', 'trace_output', 'type', 'write_operation'],
  'opentelemetry': ['add_label', 'aws_auth', 'aws_external_id', 'aws_profile', 'aws_region', 'aws_role_arn', 'aws_service', 'aws_sts_endpoint', 'batch_size', 'compress', 'grpc', 'grpc_logs_uri', 'grpc_metrics_uri', 'grpc_profiles_uri', 'grpc_traces_uri', 'header', 'http2', 'http_passwd', 'http_user', 'log_response_payload', 'logs_attributes_metadata_key', 'logs_body_key', 'logs_body_key_attributes', 'logs_instrumentation_scope_metadata_key', 'logs_max_resources', 'logs_max_scopes', 'logs_metadata_key', 'logs_observed_timestamp_metadata_key', 'logs_resource_metadata_key', 'logs_severity_number_message_key', 'logs_severity_number_metadata_key', 'logs_severity_text_message_key', 'logs_severity_text_metadata_key', 'logs_span_id_message_key', 'logs_span_id_metadata_key', 'logs_timestamp_metadata_key', 'logs_trace_flags_metadata_key', 'logs_trace_id_message_key', 'logs_trace_id_metadata_key', 'logs_uri', 'metrics_uri', 'profiles_uri', 'proxy', 'traces_uri'],
  'oracle_log_analytics': ['config_file_location', 'namespace', 'oci_config_in_record', 'oci_la_entity_id', 'oci_la_entity_type', 'oci_la_global_metadata', 'oci_la_log_group_id', 'oci_la_log_path', 'oci_la_log_set_id', 'oci_la_log_source_name', 'oci_la_metadata', 'profile_name', 'proxy', 'uri'],
  'pgsql': [],
  'plot': ['file', 'key'],
  'prometheus_exporter': ['add_label', 'add_timestamp'],
  'prometheus_remote_write': ['add_label', 'aws_auth', 'aws_external_id', 'aws_profile', 'aws_region', 'aws_role_arn', 'aws_service', 'aws_sts_endpoint', 'compression', 'header', 'http_passwd', 'http_user', 'log_response_payload', 'proxy', 'uri'],
  's3': ['authorization_endpoint_bearer_token', 'authorization_endpoint_password', 'authorization_endpoint_url', 'authorization_endpoint_username', 'auto_retry_requests', 'blob_database_file', 'bucket', 'canned_acl', 'compression', 'content_type', 'endpoint', 'external_id', 'file_delivery_attempt_limit', 'format', 'json_date_format', 'json_date_key', 'log_key', 'part_delivery_attempt_limit', 'part_size', 'preserve_data_ordering', 'profile', 'quarantine_dir_limit_size', 'region', 'retry_exhausted_action', 'role_arn', 's3_key_format', 's3_key_format_tag_delimiters', 'send_content_md5', 'static_file_path', 'storage_class', 'store_dir', 'store_dir_limit_size', 'sts_endpoint', 'total_file_size', 'upload_chunk_size', 'upload_part_freshness_limit', 'upload_parts_timeout', 'upload_timeout', 'use_put_object'],
  'skywalking': ['auth_token', 'svc_inst_name', 'svc_name'],
  'slack': ['webhook'],
  'splunk': ['auto_extract_timestamp', 'channel', 'compress', 'event_field', 'event_host', 'event_index', 'event_index_key', 'event_key', 'event_source', 'event_sourcetype', 'event_sourcetype_key', 'http_buffer_size', 'http_debug_bad_request', 'http_passwd', 'http_user', 'splunk_send_raw', 'splunk_token'],
  'stackdriver': ['autoformat_stackdriver_trace', 'cloud_logging_base_url', 'compress', 'custom_k8s_regex', 'export_to_project_id', 'google_service_credentials', 'http_request_key', 'job', 'k8s_cluster_location', 'k8s_cluster_name', 'labels', 'labels_key', 'location', 'log_name_key', 'metadata_server', 'namespace', 'node_id', 'project_id_key', 'resource', 'resource_labels', 'service_account_email', 'service_account_secret', 'severity_key', 'span_id_key', 'stackdriver_agent', 'tag_prefix', 'task_id', 'test_log_entry_format', 'text_payload_key', 'trace_key', 'trace_sampled_key'],
  'stdout': ['format', 'json_date_format', 'json_date_key'],
  'syslog': ['allow_longer_sd_id', 'mode', 'syslog_appname_key', 'syslog_appname_preset', 'syslog_facility_key', 'syslog_facility_preset', 'syslog_format', 'syslog_hostname_key', 'syslog_hostname_preset', 'syslog_maxsize', 'syslog_message_key', 'syslog_msgid_key', 'syslog_msgid_preset', 'syslog_procid_key', 'syslog_procid_preset', 'syslog_sd_key', 'syslog_severity_key', 'syslog_severity_preset'],
  'tcp': ['format', 'json_date_format', 'json_date_key', 'raw_message_key'],
  'td': ['api', 'database', 'region', 'table'],
  'udp': ['format', 'json_date_format', 'json_date_key', 'raw_message_key'],
  'vivo_exporter': ['empty_stream_on_read', 'http_cors_allow_origin', 'stream_queue_size'],
  'websocket': ['format', 'header', 'json_date_format', 'json_date_key', 'uri'],
};

/**
 * What 4.2.3 lacks of the plugins' own keys: the same extraction from the 4.2.3 sources gives
 * these plugins and keys fewer (none was removed). A collector that pins a 4.x image refuses them.
 */
export const OUTPUT_KEYS_ADDED_SINCE_4_2_3: { readonly [plugin: string]: readonly string[] } = {
  azure_logs_ingestion: ['auth_url'],
  chronicle: ['label', 'namespace', 'namespace_key'],
  es: ['upstream'],
  file: ['enable_strftime', 'fallback_file', 'fallback_path', 'max_dynamic_files', 'on_limit_reached', 'on_missing_field', 'rotate', 'rotate_gzip', 'rotate_max_files', 'rotate_max_size'],
  http: ['oauth2.audience', 'oauth2.auth_method', 'oauth2.client_id', 'oauth2.client_secret', 'oauth2.connect_timeout', 'oauth2.enable', 'oauth2.jwt_aud', 'oauth2.jwt_cert_file', 'oauth2.jwt_header', 'oauth2.jwt_key_file', 'oauth2.jwt_ttl_seconds', 'oauth2.refresh_skew_seconds', 'oauth2.resource', 'oauth2.scope', 'oauth2.timeout', 'oauth2.token_url', 'oauth2.user_agent'],
  kafka: ['otlp_logs_partition_by_resource'],
  kinesis_streams: ['compression'],
  logdna: ['exclude_promoted_keys'],
  loki: ['tenant_id_key_error_handling'],
  s3: ['format', 'quarantine_dir_limit_size', 'retry_exhausted_action'],
  splunk: ['auto_extract_timestamp'],
};

/**
 * What 4.2.3 lacks of the keys every output accepts: its flb_output_set_property handles neither
 * `tls.proxy.*` nor `oauth2*` (the same reading of src/flb_output.c at v4.2.3), so such a key goes
 * to the plugin's config_map, which has none of them. 4.2.3 has no FLB_OUTPUT_HTTP_SERVER either:
 * prometheus_exporter and vivo_exporter take none of OUTPUT_HTTP_SERVER_KEYS there.
 */
export const OUTPUT_COMMON_KEYS_ADDED_SINCE_4_2_3: readonly string[] = [
  'tls.proxy.ca_file', 'tls.proxy.ca_path', 'tls.proxy.verify', 'tls.proxy.verify_hostname', ...OUTPUT_OAUTH2_KEYS,
];

/** Output plugins 4.2.3 does not have at all. */
export const OUTPUT_PLUGINS_ADDED_SINCE_4_2_3: readonly string[] = ['gcs'];

/**
 * Output plugins without a config_map (out_pgsql reads its keys with flb_output_get_property):
 * flb_output_plugin_property_check checks none of their own keys.
 */
export const OUTPUTS_WITHOUT_CONFIG_MAP: readonly string[] = ['pgsql'];

/** Every output plugin name, sorted. */
export const OUTPUT_PLUGIN_NAMES: readonly string[] = Object.keys(OUTPUT_PLUGIN_KEYS).sort();

/** Whether `key` is a key the output plugin `plugin` of fluent-bit 5.1.1 accepts (case-insensitive). */
export function isOutputKey(plugin: string, key: string): boolean {
  const k = key.toLowerCase();
  if (OUTPUT_COMMON_KEYS.includes(k) || OUTPUT_NET_KEYS.includes(k) || OUTPUT_OAUTH2_KEYS.includes(k)) return true;
  // flb_output_set_property sets every other net.* and oauth2* key aside too, and their checks refuse it.
  if (k.startsWith('net.') || k.startsWith('oauth2')) return false;
  if (OUTPUT_HTTP_SERVER_PLUGINS.includes(plugin) && OUTPUT_HTTP_SERVER_KEYS.includes(k)) return true;
  if (OUTPUTS_WITHOUT_CONFIG_MAP.includes(plugin)) return true;
  const own = Object.prototype.hasOwnProperty.call(OUTPUT_PLUGIN_KEYS, plugin) ? OUTPUT_PLUGIN_KEYS[plugin] : [];
  return (own.includes(k) && !k.endsWith('.')) || own.some((o) => o.endsWith('.') && k.startsWith(o) && k.length > o.length);
}

/** Whether `key` of the output plugin `plugin` is one fluent-bit 4.2.3 lacks (added in 5.x). */
export function isOutputKeyAddedSince423(plugin: string, key: string): boolean {
  const k = key.toLowerCase();
  return OUTPUT_COMMON_KEYS_ADDED_SINCE_4_2_3.includes(k)
    || (OUTPUT_HTTP_SERVER_PLUGINS.includes(plugin) && OUTPUT_HTTP_SERVER_KEYS.includes(k) && !OUTPUT_COMMON_KEYS.includes(k))
    || (OUTPUT_KEYS_ADDED_SINCE_4_2_3[plugin] ?? []).includes(k);
}

/** Every key `plugin` accepts by name (prefix keys such as kafka's `rdkafka.` left out), for "did you mean" hints. */
export function outputKeyNames(plugin: string): string[] {
  return [
    ...OUTPUT_COMMON_KEYS, ...OUTPUT_NET_KEYS, ...OUTPUT_OAUTH2_KEYS,
    ...(OUTPUT_HTTP_SERVER_PLUGINS.includes(plugin) ? OUTPUT_HTTP_SERVER_KEYS : []),
    ...(OUTPUT_PLUGIN_KEYS[plugin] ?? []).filter((k) => !k.endsWith('.')),
  ];
}
