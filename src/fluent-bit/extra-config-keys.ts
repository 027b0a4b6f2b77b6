/**
 * The keys of an `extraConfig` section fluent-bit would refuse at start. fluent-bit checks every key of an
 * `[INPUT]`, `[FILTER]` or `[OUTPUT]` against what flb_input_set_property, flb_filter_set_property and
 * flb_output_set_property handle themselves and the plugin's config_map, and stops with "unknown configuration
 * property" otherwise: one typo in extraConfig is a collector that crash-loops on every node.
 *
 * Checked for the plugins whose keys this library lists (input-filter-keys.ts, output-plugins.ts, read from the
 * 5.1.1 sources): every output plugin, and the inputs and filters the collector writes itself. Other inputs' and
 * filters' keys, and the `net.*` keys of a network input (src/flb_downstream.c, not listed), are not checked.
 * A `net.*` key on an input that is no network input (tail, systemd: `.flags = 0`) is refused: fluent-bit 5.1.1's
 * flb_input_net_property_check (src/flb_input.c) checks it against a config map only network inputs have, and
 * crashes (SIGSEGV at start, seen with the built binary) instead of refusing it.
 *
 * Pure module: no cdk8s imports.
 */
import { ParsedClassicSection } from './classic-format';
import { FILTER_COMMON_KEYS, FILTER_PLUGIN_KEYS, INPUT_COMMON_KEYS, INPUT_PLUGIN_KEYS } from './input-filter-keys';
import { isOutputKey, OUTPUT_PLUGIN_NAMES, outputKeyNames } from './output-plugins';
import { nearestName } from '../validation/struct-check';

/** The listed inputs with FLB_INPUT_NET or FLB_INPUT_NET_SERVER in their flags (plugins/in_forward/fw.c). */
const NETWORK_INPUTS: readonly string[] = ['forward'];

/** Problems of one parsed extraConfig section, each naming the section's line, the key and the nearest known key. */
export function extraSectionKeyProblems(section: ParsedClassicSection): string[] {
  const plugin = (section.entries.find((e) => e.key.toLowerCase() === 'name')?.value ?? '').trim().toLowerCase();
  const where = `extraConfig [${section.name}] at line ${section.line}`;
  if (section.name === 'OUTPUT') {
    if (plugin === '') return [];
    if (!OUTPUT_PLUGIN_NAMES.includes(plugin)) {
      return [`${where}: fluent-bit 5.1 has no output plugin ${JSON.stringify(plugin)}, and would not start; its output plugins are ${OUTPUT_PLUGIN_NAMES.join(', ')}.`];
    }
    return unknown(section, (key) => isOutputKey(plugin, key))
      .map((key) => refusal(where, `the ${plugin} output`, key, outputKeyNames(plugin)));
  }
  const listed = section.name === 'INPUT' ? INPUT_PLUGIN_KEYS[plugin] : section.name === 'FILTER' ? FILTER_PLUGIN_KEYS[plugin] : undefined;
  if (listed === undefined) return [];
  const known = [...(section.name === 'INPUT' ? INPUT_COMMON_KEYS : FILTER_COMMON_KEYS), ...listed];
  const accepts = (key: string) => known.includes(key)
    // a key ending in `_` or `.` takes a suffix (in_tail's Parser_1, Parser_2 ...)
    || known.some((k) => (k.endsWith('_') || k.endsWith('.')) && key.startsWith(k) && key.length > k.length)
    || (section.name === 'INPUT' && NETWORK_INPUTS.includes(plugin) && key.startsWith('net.'));
  const names = known.filter((k) => !k.endsWith('_') && !k.endsWith('.'));
  return unknown(section, accepts).map((key) => (key.toLowerCase().startsWith('net.')
    ? `${where}: the ${plugin} input reads no network, so it takes no ${JSON.stringify(key)}; fluent-bit 5.1 does not refuse such a key, it crashes at start `
      + '(SIGSEGV: the input has no network settings to check it against) and the collector would crash-loop on every node. Remove it.'
    : refusal(where, `the ${plugin} ${section.name.toLowerCase()}`, key, names)));
}

/** The section's keys (lower-cased, as fluent-bit compares them) `accepts` refuses, each once, in order. */
function unknown(section: ParsedClassicSection, accepts: (key: string) => boolean): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const { key } of section.entries) {
    const k = key.toLowerCase();
    if (seen.has(k) || accepts(k)) continue;
    seen.add(k);
    result.push(key);
  }
  return result;
}

function refusal(where: string, what: string, key: string, names: readonly string[]): string {
  const near = nearestName(key.toLowerCase(), names);
  return `${where}: ${what} of fluent-bit 5.1 has no key ${JSON.stringify(key)}${near === undefined ? '' : ` (did you mean ${near}?)`}; `
    + 'fluent-bit refuses an unknown key at start ("unknown configuration property") and the collector would crash-loop on every node.';
}
