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

/** A number of seconds, 0 or more. */
export function secondsValue(parsed: Parsed, command: string, name: string): number | undefined {
  const text = stringValue(parsed, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new UsageError(`--${name} "${text}" is not a number of seconds (0 or more)`, command);
  }
  return value;
}
