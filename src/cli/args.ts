import { parseArgs, ParseArgsConfig } from 'util';

/** Bad usage: the CLI prints the message and the command's help hint, and exits 2. */
export class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly positionals: string[];
}

/** node's util.parseArgs in strict mode, with its errors turned into plain usage messages. */
export function parse(command: string, argv: readonly string[], options: OptionSpec, allowPositionals: boolean): Parsed {
  try {
    const result = parseArgs({ args: [...argv], options, allowPositionals, strict: true });
    return { values: result.values as Parsed['values'], positionals: result.positionals };
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    const quoted = /'([^']+)'/.exec(err.message)?.[1] ?? '';
    switch (err.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`unknown flag ${quoted.split(' ')[0]}`, command);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
        const name = quoted.split(' ')[0];
        if (/ambiguous/.test(err.message)) {
          throw new UsageError(`flag ${name} needs a value; to give one starting with "-", write ${name}=VALUE`, command);
        }
        throw new UsageError(/argument missing/.test(err.message) ? `flag ${name} needs a value` : `flag ${name} takes no value`, command);
      }
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        throw new UsageError(`unexpected argument "${quoted}"`, command);
      default:
        throw new UsageError(err.message, command);
    }
  }
}

export function stringValue(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function listValue(parsed: Parsed, name: string): string[] {
  const value = parsed.values[name];
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
}

export function flag(parsed: Parsed, name: string): boolean {
  return parsed.values[name] === true;
}

export function requiredString(parsed: Parsed, command: string, name: string, what: string): string {
  const value = stringValue(parsed, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required: ${what}`, command);
  return value;
}

/** The most seconds a flag takes: 7 days. A longer pod cycle or bake is a typo, and would print an absurd estimate. */
export const MAX_SECONDS = 7 * 24 * 3600;

/**
 * Plain decimal seconds, 0 to MAX_SECONDS: `30`, `2.5`. Number() alone would read `0x10` as 16 and
 * `1e308` as a duration of ages, so the text itself is checked, and the error says what is wrong with it.
 */
export function secondsValue(parsed: Parsed, command: string, name: string): number | undefined {
  const text = stringValue(parsed, name);
  if (text === undefined) return undefined;
  const given = `--${name} "${text}"`;
  if (/^-\d+(\.\d+)?$/.test(text)) throw new UsageError(`${given} is negative: give 0 or more seconds`, command);
  if (!/^\d+(\.\d+)?$/.test(text)) {
    const why = text.trim() === '' ? 'is empty'
      : text.trim() !== text ? 'has spaces around it'
        : /^\d+(\.\d+)?[a-z]+$/i.test(text) ? 'has a unit'
          : 'is not a plain decimal number';
    throw new UsageError(`${given} ${why}: write the number of seconds in decimal digits, such as 30 or 2.5 (no unit, sign, exponent or hex)`, command);
  }
  const value = Number(text);
  if (value > MAX_SECONDS) {
    throw new UsageError(`${given} is more than 7 days (${MAX_SECONDS} seconds), the most it takes; check the value is in seconds`, command);
  }
  return value;
}
