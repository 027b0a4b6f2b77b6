/**
 * The input and filter plugins of the pinned fluent-bit (5.1.1) and the keys each one takes, and
 * what 4.2.3 lacks of them (for a collector that pins a 4.x image).
 *
 * How they were read, at tags v5.1.1 and v4.2.3 of the fluent-bit sources, the same way as the
 * output lists: the `.name`, `.flags` and `.config_map` of every `struct flb_input_plugin` of
 * `plugins/in_<name>/` and `struct flb_filter_plugin` of `plugins/filter_<name>/`, and every
 * `FLB_CONFIG_MAP_*` entry of the config_map it names (lower-cased: fluent-bit compares keys
 * case-insensitively), skipping entries under an `#ifdef` a Linux release image does not define
 * (in_tail's `windows.path_encoding`, under FLB_SYSTEM_WINDOWS); and the names
 * `flb_input_set_property` (src/flb_input.c) and `flb_filter_set_property` (src/flb_filter.c)
 * handle themselves (`prop_key_check`, with TLS and metrics support). Any other key is checked
 * against the plugin's config_map (flb_config_map_properties_check, src/flb_config_map.c) and
 * refused at start when not in it. `name` is read by the config loader, not by these functions.
 *
 * The plugins are those a Linux build of dockerfiles/Dockerfile registers (plugins/CMakeLists.txt
 * with cmake/plugins_options.cmake's defaults and the Dockerfile's `-DFLB_IN_EXEC=Off`): not the
 * Windows-only inputs, nor the inputs and filters whose option is OFF (LEFT_OUT_INPUTS,
 * LEFT_OUT_FILTERS), nor the private inputs the engine creates itself (PRIVATE_INPUTS), which the
 * config loader refuses (flb_input_new with public_only).
 *
 * Pure data: no cdk8s import.
 */
import { OUTPUT_HTTP_SERVER_KEYS, OUTPUT_NET_KEYS } from './output-plugins';

/**
 * Keys every input accepts (src/flb_input.c flb_input_set_property). Left out: the `net.*` keys
 * (checked against src/flb_downstream.c or src/flb_upstream.c) and the HTTP server keys of the
 * inputs that serve HTTP, none of which the collector writes.
 */
export const INPUT_COMMON_KEYS: readonly string[] = [
  'alias', 'host', 'ipv6', 'listen', 'log_level', 'log_suppress_interval', 'mem_buf_limit', 'name', 'port',
  'rate_gate', 'rate_gate.backpressure', 'rate_gate.max_bytes', 'rate_gate.max_records', 'rate_gate.resume_ratio',
  'rate_window', 'routable', 'storage.pause_on_chunks_overlimit', 'storage.type', 'tag', 'thread.ring_buffer.capacity',
  'thread.ring_buffer.window', 'threaded', 'tls', 'tls.ca_file', 'tls.ca_path', 'tls.ciphers', 'tls.crt_file',
  'tls.debug', 'tls.key_file', 'tls.key_passwd', 'tls.max_version', 'tls.min_version', 'tls.verify',
  'tls.verify_client_cert', 'tls.verify_hostname', 'tls.vhost',
  // flb_input_set_property sets every key starting with `oauth2` aside and checks it against
  // src/flb_oauth2_jwt.c's config_map (JWT validation of the HTTP inputs).
  'oauth2.allowed_audience', 'oauth2.allowed_clients', 'oauth2.issuer', 'oauth2.jwks_refresh_interval',
  'oauth2.jwks_url', 'oauth2.validate',
];

/** What 4.2.3's flb_input_set_property lacks of INPUT_COMMON_KEYS (4.2.3 has no rate gate, no JWT validation). */
export const INPUT_COMMON_KEYS_ADDED_SINCE_4_2_3: readonly string[] = [
  'oauth2.allowed_audience', 'oauth2.allowed_clients', 'oauth2.issuer', 'oauth2.jwks_refresh_interval',
  'oauth2.jwks_url', 'oauth2.validate', 'rate_gate', 'rate_gate.backpressure', 'rate_gate.max_bytes',
  'rate_gate.max_records', 'rate_gate.resume_ratio', 'rate_window', 'tls.verify_client_cert',
];

/**
 * Input plugin → its config_map keys, for every input of the release image. A key ending in `_`
 * or `.` is a prefix (FLB_CONFIG_MAP_STR_PREFIX: in_tail's `parser_` takes Parser_1, Parser_2 ...).
 * An empty list: the plugin declares none and takes only the keys every input takes.
 */
export const INPUT_PLUGIN_KEYS: { readonly [plugin: string]: readonly string[] } = {
  blob: ['database_file', 'exclude_pattern', 'path', 'scan_refresh_interval', 'upload_failure_action', 'upload_failure_message', 'upload_failure_suffix', 'upload_success_action', 'upload_success_message', 'upload_success_suffix'],
  collectd: ['typesdb'],
  cpu: ['interval_nsec', 'interval_sec', 'pid'],
  disk: ['dev_name', 'interval_nsec', 'interval_sec'],
  docker: ['exclude', 'include', 'interval_nsec', 'interval_sec', 'path.containers', 'path.sysfs'],
  docker_events: ['buffer_size', 'key', 'parser', 'reconnect.retry_interval', 'reconnect.retry_limits', 'unix_path'],
  dummy: ['copies', 'dummy', 'fixed_timestamp', 'flush_on_startup', 'interval_nsec', 'interval_sec', 'metadata', 'rate', 'samples', 'start_time_nsec', 'start_time_sec', 'test_hang_on_exit'],
  elasticsearch: ['hostname', 'meta_key', 'tag_key', 'version'],
  event_type: ['interval_nsec', 'interval_sec', 'type'],
  exec_wasi: ['accessible_paths', 'buf_size', 'interval_nsec', 'interval_sec', 'oneshot', 'parser', 'wasi_path', 'wasm_heap_size', 'wasm_stack_size'],
  fluentbit_logs: [],
  fluentbit_metrics: ['scrape_interval', 'scrape_on_start'],
  forward: ['buffer_chunk_size', 'buffer_max_size', 'empty_shared_key', 'security.users', 'self_hostname', 'shared_key', 'tag_prefix', 'unix_path', 'unix_perm', 'workers'],
  gpu_metrics: ['cards_exclude', 'cards_include', 'enable_nvml', 'enable_power', 'enable_temperature', 'path_sysfs', 'scrape_interval'],
  head: ['add_path', 'buf_size', 'file', 'interval_nsec', 'interval_sec', 'key', 'lines', 'split_line'],
  health: ['add_host', 'add_port', 'alert', 'interval_nsec', 'interval_sec'],
  http: ['add_remote_addr', 'enable_health_endpoint', 'remote_addr_key', 'success_header', 'successful_response_code', 'tag_key'],
  kafka: ['aws_msk_iam', 'aws_msk_iam_cluster_arn', 'brokers', 'buffer_max_size', 'client_id', 'enable_auto_commit', 'format', 'group_id', 'poll_ms', 'poll_timeout_ms', 'rdkafka.', 'topics'],
  kmsg: ['prio_level'],
  kubernetes_events: ['db', 'db.journal_mode', 'db.locking', 'db.sync', 'interval_nsec', 'interval_sec', 'kube_ca_file', 'kube_ca_path', 'kube_namespace', 'kube_request_limit', 'kube_retention_time', 'kube_token_file', 'kube_token_ttl', 'kube_url', 'kube_watch_timeout', 'tls.debug', 'tls.verify', 'tls.vhost'],
  lib: [],
  mem: ['interval_nsec', 'interval_sec', 'pid'],
  mqtt: ['buffer_size', 'payload_key'],
  netif: ['interface', 'interval_nsec', 'interval_sec', 'test_at_init', 'verbose'],
  nginx_metrics: ['nginx_plus', 'scrape_interval', 'status_url'],
  node_exporter_metrics: ['collector.cpu.scrape_interval', 'collector.cpufreq.scrape_interval', 'collector.diskstats.scrape_interval', 'collector.filefd.scrape_interval', 'collector.filesystem.scrape_interval', 'collector.hwmon.chip-exclude', 'collector.hwmon.chip-include', 'collector.hwmon.scrape_interval', 'collector.hwmon.sensor-exclude', 'collector.hwmon.sensor-include', 'collector.loadavg.scrape_interval', 'collector.meminfo.scrape_interval', 'collector.netdev.scrape_interval', 'collector.netstat.scrape_interval', 'collector.nvme.scrape_interval', 'collector.processes.scrape_interval', 'collector.sockstat.scrape_interval', 'collector.stat.scrape_interval', 'collector.systemd.scrape_interval', 'collector.textfile.path', 'collector.textfile.scrape_interval', 'collector.thermalzone.scrape_interval', 'collector.time.scrape_interval', 'collector.timex.scrape_interval', 'collector.uname.scrape_interval', 'collector.vmstat.scrape_interval', 'diskstats.ignore_device_regex', 'filesystem.ignore_filesystem_type_regex', 'filesystem.ignore_mount_point_regex', 'metrics', 'path.procfs', 'path.rootfs', 'path.sysfs', 'scrape_interval', 'systemd_exclude_pattern', 'systemd_include_pattern', 'systemd_include_service_task_metrics', 'systemd_service_restart_metrics', 'systemd_unit_start_time_metrics'],
  opentelemetry: ['encode_profiles_as_log', 'logs_body_key', 'logs_metadata_key', 'profiles_support', 'raw_traces', 'successful_response_code', 'tag_from_uri', 'tag_key'],
  podman_metrics: ['path.config', 'path.procfs', 'path.sysfs', 'scrape_interval', 'scrape_on_start'],
  proc: ['alert', 'fd', 'interval_nsec', 'interval_sec', 'mem', 'proc_name'],
  process_exporter_metrics: ['metrics', 'path.procfs', 'process_exclude_pattern', 'process_include_pattern', 'scrape_interval'],
  prometheus_remote_write: ['successful_response_code', 'tag_from_uri', 'uri'],
  prometheus_scrape: ['bearer_token', 'buffer_max_size', 'http_passwd', 'http_user', 'metrics_path', 'scrape_interval'],
  prometheus_textfile: ['path', 'scrape_interval'],
  random: ['interval_nsec', 'interval_sec', 'samples'],
  serial: ['bitrate', 'file', 'format', 'min_bytes', 'separator'],
  splunk: ['add_remote_addr', 'remote_addr_key', 'splunk_token', 'splunk_token_key', 'store_token_in_metadata', 'success_header', 'tag_key'],
  statsd: ['metrics'],
  stdin: ['buffer_size', 'parser'],
  syslog: ['buffer_chunk_size', 'buffer_max_size', 'format', 'mode', 'parser', 'path', 'raw_message_key', 'receive_buffer_size', 'source_address_key', 'unix_perm'],
  systemd: ['db', 'db.sync', 'lowercase', 'max_entries', 'max_fields', 'path', 'read_from_tail', 'strip_underscores', 'systemd_filter', 'systemd_filter_type'],
  tail: ['buffer_chunk_size', 'buffer_max_size', 'db', 'db.compare_filename', 'db.journal_mode', 'db.locking', 'db.sync', 'docker_mode', 'docker_mode_flush', 'docker_mode_parser', 'event_batch_size', 'exclude_path', 'exit_on_eof', 'file_cache_advise', 'generic.encoding', 'ignore_active_older_files', 'ignore_older', 'inotify_watcher', 'key', 'multiline', 'multiline.parser', 'multiline_flush', 'offset_key', 'parser', 'parser_', 'parser_firstline', 'path', 'path_key', 'progress_check_interval', 'progress_check_interval_nsec', 'read_from_head', 'read_newly_discovered_files_from_head', 'refresh_interval', 'rotate_wait', 'skip_empty_lines', 'skip_long_lines', 'static_batch_size', 'tag_regex', 'truncate_long_lines', 'unicode.encoding', 'watcher_interval'],
  tcp: ['buffer_size', 'chunk_size', 'format', 'parser', 'separator', 'source_address_key', 'workers'],
  thermal: ['interval_nsec', 'interval_sec', 'name_regex', 'type_regex'],
  udp: ['buffer_size', 'chunk_size', 'format', 'parser', 'separator', 'source_address_key', 'workers'],
};

/** Inputs without a config_map: flb_input_plugin_property_check checks none of their own keys. */
export const INPUTS_WITHOUT_CONFIG_MAP: readonly string[] = ['fluentbit_logs', 'lib'];

/**
 * Inputs that serve a network port (FLB_INPUT_NET_SERVER): their `net.*` keys are checked against
 * src/flb_downstream.c's config map (DOWNSTREAM_NET_KEYS).
 */
export const NETWORK_SERVER_INPUTS: readonly string[] = [
  'collectd', 'elasticsearch', 'forward', 'http', 'mqtt', 'opentelemetry', 'prometheus_remote_write', 'splunk', 'statsd', 'syslog', 'tcp', 'udp',
];

/**
 * Inputs that connect to a server (FLB_INPUT_NET): their `net.*` keys are checked against
 * src/flb_upstream.c's config map, the outputs' OUTPUT_NET_KEYS.
 */
export const NETWORK_CLIENT_INPUTS: readonly string[] = ['docker_events', 'health', 'kubernetes_events', 'nginx_metrics', 'prometheus_scrape'];

/** The `net.*` keys of src/flb_downstream.c's config map (the same in 4.2.3). */
export const DOWNSTREAM_NET_KEYS: readonly string[] = [
  'net.accept_timeout', 'net.accept_timeout_log_error', 'net.backlog', 'net.io_timeout', 'net.keepalive', 'net.share_port',
];

/** The `net.*` keys an input takes: by its network role; none for an input that reads no network. */
export function inputNetKeys(plugin: string): readonly string[] {
  return NETWORK_SERVER_INPUTS.includes(plugin) ? DOWNSTREAM_NET_KEYS : NETWORK_CLIENT_INPUTS.includes(plugin) ? OUTPUT_NET_KEYS : [];
}

/**
 * Inputs with FLB_INPUT_HTTP_SERVER (none in 4.2.3): flb_input_set_property hands the keys
 * src/http_server/flb_http_server_config_map.c allows (`http_server.*`, `http2`, `buffer_max_size`,
 * `buffer_chunk_size`, `max_connections`, `workers`) to the HTTP server, checked against its map.
 */
export const HTTP_SERVER_INPUTS: readonly string[] = ['elasticsearch', 'http', 'opentelemetry', 'prometheus_remote_write', 'splunk'];

/** The HTTP server's keys: the outputs' (output-plugins.ts) and `workers`, which every output takes anyway. */
export const HTTP_SERVER_KEYS: readonly string[] = [...OUTPUT_HTTP_SERVER_KEYS, 'workers'];

/** Inputs the engine creates itself (FLB_INPUT_PRIVATE): the config loader refuses them in an `[INPUT]`. */
export const PRIVATE_INPUTS: readonly string[] = ['calyptia_fleet', 'emitter', 'storage_backlog', 'stream_processor'];

/** Inputs of the 5.1.1 sources that the release image does not build, and why. */
export const LEFT_OUT_INPUTS: { readonly [plugin: string]: string } = {
  ebpf: 'FLB_IN_EBPF is OFF by default',
  event_test: 'FLB_IN_EVENT_TEST is OFF by default',
  exec: 'dockerfiles/Dockerfile builds with -DFLB_IN_EXEC=Off',
  event_tracing_windows: 'it is built on Windows only',
  unix_socket: 'FLB_IN_UNIX_SOCKET is OFF by default',
  windows_exporter_metrics: 'it is built on Windows only',
  winevtlog: 'it is built on Windows only',
  winlog: 'it is built on Windows only',
  winstat: 'it is built on Windows only',
};

/** Input plugins 4.2.3 does not have at all. */
export const INPUT_PLUGINS_ADDED_SINCE_4_2_3: readonly string[] = ['fluentbit_logs'];

/**
 * What 4.2.3 lacks of the keys each input takes (its own and, for the HTTP inputs, the HTTP
 * server's, which 4.2.3's inputs declare in part themselves).
 */
export const INPUT_KEYS_ADDED_SINCE_4_2_3: { readonly [plugin: string]: readonly string[] } = {
  elasticsearch: ['http_server.buffer_chunk_size', 'http_server.buffer_max_size', 'http_server.http2', 'http_server.idle_timeout', 'http_server.ingress_queue_byte_limit', 'http_server.ingress_queue_event_limit', 'http_server.max_connections', 'http_server.workers', 'max_connections', 'workers'],
  forward: ['workers'],
  gpu_metrics: ['enable_nvml'],
  http: ['add_remote_addr', 'enable_health_endpoint', 'http_server.buffer_chunk_size', 'http_server.buffer_max_size', 'http_server.http2', 'http_server.idle_timeout', 'http_server.ingress_queue_byte_limit', 'http_server.ingress_queue_event_limit', 'http_server.max_connections', 'http_server.workers', 'max_connections', 'remote_addr_key', 'workers'],
  kubernetes_events: ['db.journal_mode', 'db.locking', 'kube_watch_timeout'],
  node_exporter_metrics: ['collector.timex.scrape_interval'],
  opentelemetry: ['http_server.buffer_chunk_size', 'http_server.buffer_max_size', 'http_server.http2', 'http_server.idle_timeout', 'http_server.ingress_queue_byte_limit', 'http_server.ingress_queue_event_limit', 'http_server.max_connections', 'http_server.workers', 'max_connections', 'workers'],
  prometheus_remote_write: ['http_server.buffer_chunk_size', 'http_server.buffer_max_size', 'http_server.http2', 'http_server.idle_timeout', 'http_server.ingress_queue_byte_limit', 'http_server.ingress_queue_event_limit', 'http_server.max_connections', 'http_server.workers', 'max_connections', 'workers'],
  splunk: ['http_server.buffer_chunk_size', 'http_server.buffer_max_size', 'http_server.http2', 'http_server.idle_timeout', 'http_server.ingress_queue_byte_limit', 'http_server.ingress_queue_event_limit', 'http_server.max_connections', 'http_server.workers', 'max_connections', 'workers'],
  tcp: ['parser', 'workers'],
  udp: ['parser', 'workers'],
};

/** Keys every filter accepts (src/flb_filter.c flb_filter_set_property; the same in 4.2.3). */
export const FILTER_COMMON_KEYS: readonly string[] = ['alias', 'log_level', 'log_suppress_interval', 'match', 'match_regex', 'name'];

/**
 * Filter plugin → its config_map keys, for every filter of the release image (FLB_FILTER_TENSORFLOW
 * and FLB_FILTER_THROTTLE_SIZE are OFF by default: LEFT_OUT_FILTERS).
 */
export const FILTER_PLUGIN_KEYS: { readonly [plugin: string]: readonly string[] } = {
  alter_size: ['add', 'remove'],
  aws: ['account_id', 'ami_id', 'az', 'ec2_instance_id', 'ec2_instance_type', 'enable_entity', 'hostname', 'imds_version', 'private_ip', 'retry_interval_s', 'tags_enabled', 'tags_exclude', 'tags_include', 'vpc_id'],
  checklist: ['file', 'ignore_case', 'lookup_key', 'mode', 'print_query_time', 'record'],
  ecs: ['add', 'agent_endpoint_retries', 'cluster_metadata_only', 'ecs_meta_cache_ttl', 'ecs_meta_host', 'ecs_meta_port', 'ecs_tag_prefix'],
  expect: ['action', 'key_exists', 'key_not_exists', 'key_val_eq', 'key_val_is_not_null', 'key_val_is_null', 'result_key'],
  geoip2: ['database', 'lookup_key', 'record'],
  grep: ['exclude', 'logical_op', 'regex'],
  kubernetes: ['annotations', 'aws_pod_association_endpoint', 'aws_pod_association_host', 'aws_pod_association_host_client_cert_file', 'aws_pod_association_host_client_key_file', 'aws_pod_association_host_server_ca_file', 'aws_pod_association_host_tls_debug', 'aws_pod_association_host_tls_verify', 'aws_pod_association_port', 'aws_pod_service_map_refresh_interval', 'aws_pod_service_map_ttl', 'aws_pod_service_preload_cache_dir', 'aws_use_pod_association', 'buffer_size', 'cache_use_docker_id', 'dns_retries', 'dns_wait_time', 'dummy_meta', 'k8s-logging.exclude', 'k8s-logging.parser', 'keep_log', 'kube_ca_file', 'kube_ca_path', 'kube_meta_cache_ttl', 'kube_meta_namespace_cache_ttl', 'kube_meta_preload_cache_dir', 'kube_namespace_file', 'kube_tag_prefix', 'kube_token_command', 'kube_token_file', 'kube_token_ttl', 'kube_url', 'kubelet_host', 'kubelet_port', 'labels', 'merge_log', 'merge_log_key', 'merge_log_trim', 'merge_parser', 'namespace_annotations', 'namespace_labels', 'namespace_metadata_only', 'owner_references', 'regex_parser', 'set_platform', 'tls.debug', 'tls.verify', 'tls.verify_hostname', 'tls.vhost', 'use_journal', 'use_kubelet', 'use_pod_association', 'use_tag_for_meta'],
  log_to_metrics: ['add_label', 'bucket', 'discard_logs', 'emitter_mem_buf_limit', 'emitter_name', 'exclude', 'flush_interval_nsec', 'flush_interval_sec', 'kubernetes_mode', 'label_field', 'metric_description', 'metric_mode', 'metric_name', 'metric_namespace', 'metric_subsystem', 'regex', 'tag', 'value_field'],
  lua: ['call', 'code', 'enable_flb_null', 'protected_mode', 'script', 'time_as_table', 'type_array_key', 'type_int_key'],
  modify: ['add', 'condition', 'copy', 'hard_copy', 'hard_rename', 'move_to_end', 'move_to_start', 'remove', 'remove_regex', 'remove_wildcard', 'rename', 'set'],
  multiline: ['buffer', 'debug_flush', 'emitter_mem_buf_limit', 'emitter_name', 'emitter_storage.type', 'flush_ms', 'mode', 'multiline.key_content', 'multiline.parser'],
  nest: ['add_prefix', 'nest_under', 'nested_under', 'operation', 'remove_prefix', 'wildcard'],
  nightfall: ['nightfall_api_key', 'policy_id', 'sampling_rate', 'tls.ca_path', 'tls.debug', 'tls.verify', 'tls.vhost'],
  parser: ['key_name', 'parser', 'preserve_key', 'reserve_data', 'unescape_key'],
  record_modifier: ['allowlist_key', 'record', 'remove_key', 'uuid_key', 'whitelist_key'],
  rewrite_tag: ['emitter_mem_buf_limit', 'emitter_name', 'emitter_storage.type', 'rule'],
  stdout: [],
  sysinfo: ['fluentbit_version_key', 'hostname_key', 'kernel_version_key', 'os_name_key', 'os_version_key'],
  throttle: ['interval', 'print_status', 'rate', 'window'],
  type_converter: ['float_key', 'int_key', 'str_key', 'uint_key'],
  wasm: ['accessible_paths', 'event_format', 'function_name', 'wasm_heap_size', 'wasm_path', 'wasm_stack_size'],
};

/** Filters of the 5.1.1 sources that the release image does not build, and why. */
export const LEFT_OUT_FILTERS: { readonly [plugin: string]: string } = {
  tensorflow: 'FLB_FILTER_TENSORFLOW is OFF by default',
  throttle_size: 'FLB_FILTER_THROTTLE_SIZE is OFF by default',
};

/** What 4.2.3 lacks of FILTER_PLUGIN_KEYS (every filter plugin is in 4.2.3). */
export const FILTER_KEYS_ADDED_SINCE_4_2_3: { readonly [plugin: string]: readonly string[] } = {
  kubernetes: ['kube_namespace_file'],
};

/**
 * Keys flb_config_map_properties_check (src/flb_config_map.c) accepts on every plugin that has a
 * config_map, before looking at the map ("special core properties"; the same in 4.2.3).
 */
export const CORE_PROPERTY_KEYS: readonly string[] = ['active', 'condition'];

/** `map[key]` when `key` is one of its own keys (never an Object.prototype member such as `constructor`). */
export function ownEntry<T>(map: { readonly [key: string]: T }, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

/**
 * Whether `key` of an `[INPUT]` or `[FILTER]` section of `plugin` is one fluent-bit 5.1.1 has and
 * 4.2.3 lacks.
 */
export function isKeyAddedSince423(section: 'INPUT' | 'FILTER', plugin: string, key: string): boolean {
  const k = key.toLowerCase();
  return section === 'INPUT'
    ? INPUT_COMMON_KEYS_ADDED_SINCE_4_2_3.includes(k) || (ownEntry(INPUT_KEYS_ADDED_SINCE_4_2_3, plugin) ?? []).includes(k)
    : (ownEntry(FILTER_KEYS_ADDED_SINCE_4_2_3, plugin) ?? []).includes(k);
}
