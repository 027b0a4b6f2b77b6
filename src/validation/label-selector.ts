/**
 * A label selector as kubectl's `-l` takes it, checked the way the API machinery parses it
 * (k8s.io/apimachinery pkg/labels/selector.go `Parse`): requirements separated by ",", each `key`,
 * `!key`, `key=value`, `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, or
 * `key>n` / `key<n` for a whole number; keys are label keys, values label values. Pure.
 */
import { checkLabelKey, checkLabelValue, describeValue } from './values';

const SET_REQUIREMENT = /^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY = /^([^\s!=<>(),]+)\s*(==|=|!=)\s*([^\s!=<>(),]*)$/;
const NUMERIC = /^([^\s!=<>(),]+)\s*([<>])\s*([^\s!=<>(),]*)$/;
const EXISTS = /^(!?)\s*([^\s!=<>(),]+)$/;

/** Problems of `selector`, each naming `prop`; `[]` when the API machinery would parse it. */
export function checkLabelSelector(prop: string, selector: unknown): string[] {
  if (typeof selector !== 'string') return [`${prop} must be a label selector string such as "app=batch", got ${describeValue(selector)}`];
  const example = 'e.g. "app=batch" or "job-type in (training,etl)"';
  if (/[\r\n\t\0]/.test(selector)) return [`${prop} ${JSON.stringify(selector)} contains a line break or control character; a label selector is one line, ${example}`];
  if (selector.trim() === '') return [`${prop} is empty, which selects every pod; give a label selector, ${example}`];
  const problems: string[] = [];
  for (const part of splitRequirements(selector)) {
    const requirement = part.trim();
    const set = SET_REQUIREMENT.exec(requirement);
    const equality = EQUALITY.exec(requirement);
    const numeric = NUMERIC.exec(requirement);
    const exists = EXISTS.exec(requirement);
    if (set) {
      problems.push(...checkLabelKey(prop, set[1]));
      const values = set[3].split(',').map((v) => v.trim());
      problems.push(...values.flatMap((v) => checkLabelValue(`${prop} value`, v)));
    } else if (equality) {
      problems.push(...checkLabelKey(prop, equality[1]), ...checkLabelValue(`${prop} value`, equality[3]));
    } else if (numeric) {
      problems.push(...checkLabelKey(prop, numeric[1]));
      if (!/^-?[0-9]+$/.test(numeric[3])) problems.push(`${prop}: "${requirement}" compares with "${numeric[3]}", which is not a whole number`);
    } else if (exists) {
      problems.push(...checkLabelKey(prop, exists[2]));
    } else {
      problems.push(`${prop}: "${requirement}" in ${JSON.stringify(selector)} is not a label selector requirement; write key, !key, key=value, key!=value or key in (a,b), ${example}`);
    }
  }
  return problems;
}

/** The requirements of a selector: split at the commas outside parentheses. */
function splitRequirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') {depth++;} else if (c === ')') {depth--;} else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts;
}
