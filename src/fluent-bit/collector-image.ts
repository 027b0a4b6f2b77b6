/**
 * The log collector runs fluent-bit: `/fluent-bit/bin/fluent-bit -c <config>` with a fluent-bit
 * configuration. An image of another log agent has neither that binary nor that config language,
 * so every pod fails at start. Pure: no cdk8s.
 */

/**
 * Other log agents, by the last segment of their image repository: fluentd (fluent/fluentd, the
 * fluentd-kubernetes-daemonset images), Vector, Filebeat, Promtail, Logstash, Grafana Alloy and the
 * OpenTelemetry Collector.
 */
const OTHER_AGENTS: ReadonlyArray<[RegExp, string]> = [
  [/^fluentd($|[-_])/, 'fluentd'],
  [/^vector($|[-_])/, 'Vector'],
  [/^filebeat($|[-_])/, 'Filebeat'],
  [/^promtail($|[-_])/, 'Promtail'],
  [/^logstash($|[-_])/, 'Logstash'],
  [/^alloy($|[-_])/, 'Grafana Alloy'],
  [/^opentelemetry-collector($|[-_])/, 'the OpenTelemetry Collector'],
];

/** The refusal of an image that is another log agent than fluent-bit, naming the prop. */
export function collectorImageProblems(prop: string, image: string): string[] {
  const repository = image.split('@')[0].replace(/:[^/:]*$/, '');
  const name = repository.substring(repository.lastIndexOf('/') + 1).toLowerCase();
  const other = OTHER_AGENTS.find(([pattern]) => pattern.test(name));
  if (!other) return [];
  return [`${prop} "${image}" is a ${other[1]} image, but the log collector runs fluent-bit (/fluent-bit/bin/fluent-bit with a fluent-bit configuration): `
    + 'every pod would fail at start. Use a fluent-bit image such as "cr.fluentbit.io/fluent/fluent-bit:5.1.1", or run the other agent with NodeAgentDaemonSet'];
}
