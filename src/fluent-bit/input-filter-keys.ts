/**
 * The keys of the fluent-bit inputs and filters the collector writes, in the pinned fluent-bit
 * (5.1.1), and what 4.2.3 lacks of them (for a collector that pins a 4.x image).
 *
 * How they were read, at tags v5.1.1 and v4.2.3 of the fluent-bit sources, the same way as the
 * output lists: every `FLB_CONFIG_MAP_*` entry of `plugins/in_<name>/*.c` and
 * `plugins/filter_<name>/*.c` (lower-cased: fluent-bit compares keys case-insensitively), skipping
 * entries under an `#ifdef` a Linux release image does not define (in_tail's
 * `windows.path_encoding`); and the names `flb_input_set_property` (src/flb_input.c) and
 * `flb_filter_set_property` (src/flb_filter.c) handle themselves (`prop_key_check`, with TLS and
 * metrics support). Any other key is checked against the plugin's config_map and refused at
 * start when not in it. `name` is read by the config loader, not by these functions.
 *
 * Pure data: no cdk8s import.
 */

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

/** Input plugin → its config_map keys, for the inputs the collector writes. */
export const INPUT_PLUGIN_KEYS: { readonly [plugin: string]: readonly string[] } = {
  forward: ['buffer_chunk_size', 'buffer_max_size', 'empty_shared_key', 'security.users', 'self_hostname', 'shared_key',
    'tag_prefix', 'unix_path', 'unix_perm', 'workers'],
  systemd: ['db', 'db.sync', 'lowercase', 'max_entries', 'max_fields', 'path', 'read_from_tail', 'strip_underscores',
    'systemd_filter', 'systemd_filter_type'],
  tail: ['buffer_chunk_size', 'buffer_max_size', 'db', 'db.compare_filename', 'db.journal_mode', 'db.locking', 'db.sync',
    'docker_mode', 'docker_mode_flush', 'docker_mode_parser', 'event_batch_size', 'exclude_path', 'exit_on_eof',
    'file_cache_advise', 'generic.encoding', 'ignore_active_older_files', 'ignore_older', 'inotify_watcher', 'key',
    'multiline', 'multiline.parser', 'multiline_flush', 'offset_key', 'parser', 'parser_', 'parser_firstline', 'path',
    'path_key', 'progress_check_interval', 'progress_check_interval_nsec', 'read_from_head',
    'read_newly_discovered_files_from_head', 'refresh_interval', 'rotate_wait', 'skip_empty_lines', 'skip_long_lines',
    'static_batch_size', 'tag_regex', 'truncate_long_lines', 'unicode.encoding', 'watcher_interval'],
};

/** What 4.2.3 lacks of INPUT_PLUGIN_KEYS. */
export const INPUT_KEYS_ADDED_SINCE_4_2_3: { readonly [plugin: string]: readonly string[] } = {
  forward: ['workers'],
};

/** Keys every filter accepts (src/flb_filter.c flb_filter_set_property; the same in 4.2.3). */
export const FILTER_COMMON_KEYS: readonly string[] = ['alias', 'log_level', 'log_suppress_interval', 'match', 'match_regex', 'name'];

/** Filter plugin → its config_map keys, for the filters the collector writes. */
export const FILTER_PLUGIN_KEYS: { readonly [plugin: string]: readonly string[] } = {
  grep: ['exclude', 'logical_op', 'regex'],
  kubernetes: ['annotations', 'aws_pod_association_endpoint', 'aws_pod_association_host', 'aws_pod_association_host_client_cert_file',
    'aws_pod_association_host_client_key_file', 'aws_pod_association_host_server_ca_file', 'aws_pod_association_host_tls_debug',
    'aws_pod_association_host_tls_verify', 'aws_pod_association_port', 'aws_pod_service_map_refresh_interval', 'aws_pod_service_map_ttl',
    'aws_pod_service_preload_cache_dir', 'aws_use_pod_association', 'buffer_size', 'cache_use_docker_id', 'dns_retries', 'dns_wait_time',
    'dummy_meta', 'k8s-logging.exclude', 'k8s-logging.parser', 'keep_log', 'kube_ca_file', 'kube_ca_path', 'kube_meta_cache_ttl',
    'kube_meta_namespace_cache_ttl', 'kube_meta_preload_cache_dir', 'kube_namespace_file', 'kube_tag_prefix', 'kube_token_command',
    'kube_token_file', 'kube_token_ttl', 'kube_url', 'kubelet_host', 'kubelet_port', 'labels', 'merge_log', 'merge_log_key',
    'merge_log_trim', 'merge_parser', 'namespace_annotations', 'namespace_labels', 'namespace_metadata_only', 'owner_references',
    'regex_parser', 'set_platform', 'tls.debug', 'tls.verify', 'tls.verify_hostname', 'tls.vhost', 'use_journal', 'use_kubelet',
    'use_pod_association', 'use_tag_for_meta'],
  lua: ['call', 'code', 'enable_flb_null', 'protected_mode', 'script', 'time_as_table', 'type_array_key', 'type_int_key'],
  modify: ['add', 'condition', 'copy', 'hard_copy', 'hard_rename', 'move_to_end', 'move_to_start', 'remove', 'remove_regex',
    'remove_wildcard', 'rename', 'set'],
  multiline: ['buffer', 'debug_flush', 'emitter_mem_buf_limit', 'emitter_name', 'emitter_storage.type', 'flush_ms', 'mode',
    'multiline.key_content', 'multiline.parser'],
  nest: ['add_prefix', 'nest_under', 'nested_under', 'operation', 'remove_prefix', 'wildcard'],
  record_modifier: ['allowlist_key', 'record', 'remove_key', 'uuid_key', 'whitelist_key'],
  rewrite_tag: ['emitter_mem_buf_limit', 'emitter_name', 'emitter_storage.type', 'rule'],
  throttle: ['interval', 'print_status', 'rate', 'window'],
};

/** What 4.2.3 lacks of FILTER_PLUGIN_KEYS. */
export const FILTER_KEYS_ADDED_SINCE_4_2_3: { readonly [plugin: string]: readonly string[] } = {
  kubernetes: ['kube_namespace_file'],
};

/**
 * Whether `key` of an `[INPUT]` or `[FILTER]` section of `plugin` is one fluent-bit 5.1.1 has and
 * 4.2.3 lacks (only the plugins listed above are known; other plugins' own keys are not checked).
 */
export function isKeyAddedSince423(section: 'INPUT' | 'FILTER', plugin: string, key: string): boolean {
  const k = key.toLowerCase();
  return section === 'INPUT'
    ? INPUT_COMMON_KEYS_ADDED_SINCE_4_2_3.includes(k) || (INPUT_KEYS_ADDED_SINCE_4_2_3[plugin] ?? []).includes(k)
    : (FILTER_KEYS_ADDED_SINCE_4_2_3[plugin] ?? []).includes(k);
}
