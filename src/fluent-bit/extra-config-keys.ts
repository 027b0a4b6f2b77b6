/**
 * The plugin names and keys of an `extraConfig` section fluent-bit would refuse at start. fluent-bit
 * creates each `[INPUT]`, `[FILTER]` and `[OUTPUT]` by its `Name` (src/flb_config.c: "tried to
 * instance a plugin name that doesn't exist" otherwise) and checks every other key against what
 * flb_input_set_property, flb_filter_set_property and flb_output_set_property handle themselves and
 * the plugin's config_map, and stops with "unknown configuration property" otherwise: one typo in
 * extraConfig is a collector that crash-loops on every node.
 *
 * Checked for every plugin of the release image (input-filter-keys.ts, output-plugins.ts, read from
 * the 5.1.1 sources), with the `net.*` keys by the input's network role and the HTTP server's keys
 * of the inputs that serve HTTP. A `net.*` key on an input that is no network input (tail, systemd:
 * `.flags = 0`) is refused: fluent-bit 5.1.1's flb_input_net_property_check (src/flb_input.c) checks
 * it against a config map only network inputs have, and crashes (SIGSEGV at start, seen with the
 * built binary) instead of refusing it. A `Name` taken from an environment variable (`${...}`)
 * cannot be known here and is not checked.
 *
 * Pure module: no cdk8s imports.
 */
import { ParsedClassicSection } from './classic-format';
import {
  CORE_PROPERTY_KEYS, FILTER_COMMON_KEYS, FILTER_PLUGIN_KEYS, HTTP_SERVER_INPUTS, HTTP_SERVER_KEYS, INPUT_COMMON_KEYS, INPUT_PLUGIN_KEYS,
  inputNetKeys, INPUTS_WITHOUT_CONFIG_MAP, LEFT_OUT_FILTERS, LEFT_OUT_INPUTS, ownEntry, PRIVATE_INPUTS,
} from './input-filter-keys';
import { luaSyntaxProblem } from './lua-check';
import { isOutputKey, OUTPUT_PLUGIN_NAMES, outputKeyNames } from './output-plugins';
import { nearestName } from '../validation/struct-check';

/** Every input and filter plugin name of the release image, sorted. */
const INPUT_PLUGIN_NAMES: readonly string[] = Object.keys(INPUT_PLUGIN_KEYS).sort();
const FILTER_PLUGIN_NAMES: readonly string[] = Object.keys(FILTER_PLUGIN_KEYS).sort();

/** Problems of one parsed extraConfig section, each naming the section's line, the key, its line and the nearest known key. */
export function extraSectionKeyProblems(section: ParsedClassicSection): string[] {
  if (section.name !== 'INPUT' && section.name !== 'FILTER' && section.name !== 'OUTPUT') return [];
  const where = `extraConfig [${section.name}] at line ${section.line}`;
  const nameEntry = section.entries.find((e) => e.key.toLowerCase() === 'name');
  if (nameEntry === undefined) {
    return [`${where}: the section has no Name; fluent-bit refuses it at start ("section is missing the 'name' property") `
      + 'and the collector would crash-loop on every node. Add Name <plugin>.'];
  }
  const plugin = nameEntry.value.trim().toLowerCase();
  if (plugin.includes('${')) return [];
  const kind = section.name.toLowerCase();
  const problem = pluginNameProblem(section.name, plugin);
  if (problem !== undefined) return [`${where}: ${problem}`];
  if (section.name === 'OUTPUT') {
    return unknown(section, (key) => isOutputKey(plugin, key) || CORE_PROPERTY_KEYS.includes(key))
      .map(([key, line]) => refusal(where, `the ${plugin} output`, key, line, outputKeyNames(plugin)));
  }
  if (section.name === 'INPUT' && INPUTS_WITHOUT_CONFIG_MAP.includes(plugin)) return [];
  const input = section.name === 'INPUT';
  const known = [
    ...(input ? INPUT_COMMON_KEYS : FILTER_COMMON_KEYS), ...CORE_PROPERTY_KEYS,
    ...(input ? ownEntry(INPUT_PLUGIN_KEYS, plugin) : ownEntry(FILTER_PLUGIN_KEYS, plugin)) ?? [],
    ...(input && HTTP_SERVER_INPUTS.includes(plugin) ? HTTP_SERVER_KEYS : []),
    ...(input ? inputNetKeys(plugin) : []),
  ];
  const accepts = (key: string) => known.includes(key)
    // a key ending in `_` or `.` takes a suffix (in_tail's Parser_1, Parser_2 ...)
    || known.some((k) => (k.endsWith('_') || k.endsWith('.')) && key.startsWith(k) && key.length > k.length);
  const names = known.filter((k) => !k.endsWith('_') && !k.endsWith('.'));
  const keyProblems = unknown(section, accepts).map(([key, line]) => (input && key.toLowerCase().startsWith('net.') && inputNetKeys(plugin).length === 0
    ? `${where}: the ${plugin} input reads no network, so it takes no ${JSON.stringify(key)} (line ${line}); fluent-bit 5.1 does not refuse such a key, it crashes at start `
      + '(SIGSEGV: the input has no network settings to check it against) and the collector would crash-loop on every node. Remove it.'
    : refusal(where, `the ${plugin} ${kind}`, key, line, names)));
  return [...keyProblems, ...(!input && plugin === 'lua' ? luaCodeProblems(section, where) : [])];
}

/** A lua filter's inline `code`, parsed as fluent-bit's LuaJIT would load it (lua-check.ts). */
function luaCodeProblems(section: ParsedClassicSection, at: string): string[] {
  return section.entries.flatMap(({ key, value }, i) => {
    if (key.toLowerCase() !== 'code' || value.includes('${')) return [];
    const problem = luaSyntaxProblem(`code (line ${section.entryLines[i]})`, value);
    return problem === undefined ? [] : [`${at}: ${problem}`];
  });
}

/** Why fluent-bit 5.1.1's image would not create a plugin of this name in this section, if it would not. */
function pluginNameProblem(section: 'INPUT' | 'FILTER' | 'OUTPUT', plugin: string): string | undefined {
  const kind = section.toLowerCase();
  const crash = 'fluent-bit refuses it at start ("tried to instance a plugin name that doesn\'t exist") and the collector would crash-loop on every node';
  if (section === 'INPUT' && PRIVATE_INPUTS.includes(plugin)) {
    return `${plugin} is an input fluent-bit creates itself (FLB_INPUT_PRIVATE); a config cannot name it: ${crash}.`;
  }
  const leftOut = ownEntry(section === 'INPUT' ? LEFT_OUT_INPUTS : section === 'FILTER' ? LEFT_OUT_FILTERS : {}, plugin);
  if (leftOut !== undefined) return `the fluent-bit 5.1.1 image has no ${plugin} ${kind} (${leftOut}): ${crash}.`;
  const names = section === 'INPUT' ? INPUT_PLUGIN_NAMES : section === 'FILTER' ? FILTER_PLUGIN_NAMES : OUTPUT_PLUGIN_NAMES;
  if (names.includes(plugin)) return undefined;
  const near = nearestName(plugin, names);
  return `fluent-bit 5.1 has no ${kind} plugin ${JSON.stringify(plugin)}${near === undefined ? '' : ` (did you mean ${near}?)`}: ${crash}. `
    + `Its ${kind} plugins are ${names.join(', ')}.`;
}

/** The section's keys `accepts` refuses (it gets them lower-cased, as fluent-bit compares them), each once, in order, with their line. */
function unknown(section: ParsedClassicSection, accepts: (key: string) => boolean): [string, number][] {
  const seen = new Set<string>();
  const result: [string, number][] = [];
  section.entries.forEach(({ key }, i) => {
    const k = key.toLowerCase();
    if (seen.has(k) || accepts(k)) return;
    seen.add(k);
    result.push([key, section.entryLines[i]]);
  });
  return result;
}

function refusal(at: string, what: string, key: string, line: number, names: readonly string[]): string {
  const near = nearestName(key.toLowerCase(), names);
  return `${at}: ${what} of fluent-bit 5.1 has no key ${JSON.stringify(key)} (line ${line}${near === undefined ? '' : `; did you mean ${near}?`}); `
    + 'fluent-bit refuses an unknown key at start ("unknown configuration property") and the collector would crash-loop on every node.';
}
