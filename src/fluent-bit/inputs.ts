/**
 * Extra fluent-bit inputs of a custom pipeline: more files to tail (host logs outside
 * /var/log/containers) and more systemd units under their own tag. The container-log tail
 * input, the collector's systemd input and the forward input are the collector's own props.
 *
 * Every key written is in the config_map of plugins/in_tail or plugins/in_systemd, or one of the
 * keys src/flb_input.c takes for every input, in fluent-bit 5.1.1 and in 4.2.3
 * (input-filter-keys.ts; the tests check each rendered input against those lists).
 *
 * Pure module: no cdk8s imports. Exported through the package index (jsii).
 */
import { ClassicEntry, writableEntryProblem } from './classic-format';
import { staticDir } from './extra-config-paths';
import { NAME_PATTERN } from './parser-checks';
import { InputRenderContext, RenderedInput } from './rendered-output';
import { brand } from '../validation/brand';
import { ValidationError } from '../validation/errors';
import { checkArgs } from '../validation/struct-check';

/** Options every extra input shares. */
export interface InputCommonOptions {
  /**
   * Tag of the records, e.g. `host.audit`. Must not start with `kube.` (the kubernetes filter
   * would read pod names from it).
   */
  readonly tag: string;
  /**
   * Alias (names the input's metrics and its offset database). Letters, digits, `-`, `_`.
   * @default - `tail_<n>` / `systemd_<n>` in the order given
   */
  readonly alias?: string;
}

/** Options of an extra tail input. */
export interface TailInputOptions extends InputCommonOptions {
  /**
   * Absolute file paths or globs on the node, e.g. `/var/log/audit/audit.log`. Directories
   * outside /var/log are mounted read-only (the part of the path before the first wildcard).
   */
  readonly paths: string[];
  /**
   * Globs of files to skip (`Exclude_Path`).
   * @default - none
   */
  readonly excludePaths?: string[];
  /**
   * Parser applied to each line (`Parser`): a stock parser of the image or one of the collector's `parsers`.
   * @default - none (the line is the `log` key)
   */
  readonly parser?: string;
  /**
   * Multiline parsers (`multiline.parser`), built in or the collector's own.
   * @default - none
   */
  readonly multilineParsers?: string[];
  /**
   * Add the file path under this key (`Path_Key`).
   * @default - none
   */
  readonly pathKey?: string;
}

/** Options of an extra systemd input. */
export interface SystemdInputOptions extends InputCommonOptions {
  /** Units to read, e.g. `['sshd.service']`. */
  readonly units: string[];
}

/** An extra fluent-bit input. Create one with the static factories. */
export class FluentBitInput {
  /** Tail more files of the node (host logs, audit logs). */
  public static tail(options: TailInputOptions): FluentBitInput {
    checkArgs('FluentBitInput.tail', [options]);
    if (options.paths.length === 0) {
      throw new ValidationError('FluentBitInput.tail', 'paths is empty; give at least one absolute path or glob.');
    }
    for (const p of [...options.paths, ...(options.excludePaths ?? [])]) {
      if (!/^\/[^\s,]*$/.test(p) || /\/\.\.?(\/|$)/.test(p)) {
        throw new ValidationError('FluentBitInput.tail', `path ${JSON.stringify(p)} must be absolute, without spaces, commas or '..'.`);
      }
    }
    if (options.parser !== undefined && !NAME_PATTERN.test(options.parser)) {
      throw new ValidationError('FluentBitInput.tail', `parser ${JSON.stringify(options.parser)} is not a parser name (${NAME_PATTERN}): a stock parser of the image `
        + 'such as "json", or a name of the collector\'s parsers. Leave it unset for none.');
    }
    if (options.pathKey !== undefined && !/^[^\s$,]+$/.test(options.pathKey)) {
      throw new ValidationError('FluentBitInput.tail', `pathKey ${JSON.stringify(options.pathKey)} must be a record key (non-empty, without spaces, '$' or ','), `
        + 'e.g. "file". Leave it unset for none.');
    }
    for (const p of options.paths) {
      if (p.startsWith('/var/log/containers/') || p.startsWith('/var/log/pods/')) {
        throw new ValidationError('FluentBitInput.tail', `${p} is read by the collector's own container-log input already; tailing it twice ships every line twice.`);
      }
    }
    return new FluentBitInput('tail', options, (alias, ctx) => {
      const db = `${ctx.stateDir}/${alias}.db`;
      return {
        entries: [
          ['Path', options.paths.join(',')],
          ['Exclude_Path', options.excludePaths && options.excludePaths.length > 0 ? options.excludePaths.join(',') : undefined],
          ['Parser', options.parser],
          ['multiline.parser', options.multilineParsers && options.multilineParsers.length > 0 ? options.multilineParsers.join(', ') : undefined],
          ['Path_Key', options.pathKey],
          ['DB', db],
          ['DB.locking', 'true'],
          ['Read_from_Head', 'On'],
          ['Skip_Long_Lines', 'On'],
        ],
        writePaths: [db],
        readDirs: options.paths.map(staticDir),
        parsers: options.parser ? [options.parser] : [],
        multilineParsers: options.multilineParsers ?? [],
        journal: false,
      };
    });
  }

  /** Read more systemd units from the journal, under their own tag. */
  public static systemd(options: SystemdInputOptions): FluentBitInput {
    checkArgs('FluentBitInput.systemd', [options]);
    if (options.units.length === 0) {
      throw new ValidationError('FluentBitInput.systemd', 'units is empty; name at least one unit, e.g. \'sshd.service\'.');
    }
    for (const u of options.units) {
      if (!/^[A-Za-z0-9@._:\\-]+$/.test(u)) throw new ValidationError('FluentBitInput.systemd', `${JSON.stringify(u)} is not a unit name (e.g. 'sshd.service').`);
    }
    return new FluentBitInput('systemd', options, (alias, ctx) => {
      const db = `${ctx.stateDir}/${alias}.db`;
      return {
        entries: [
          // No Path: the local journal, persistent or volatile (see the collector's own systemd input).
          ...[...options.units].sort().map((u): [string, string] => ['Systemd_Filter', `_SYSTEMD_UNIT=${u}`]),
          ['DB', db],
          ['DB.Sync', 'Normal'],
          ['Read_From_Tail', 'On'],
          ['Strip_Underscores', 'On'],
        ],
        writePaths: [db],
        readDirs: [],
        parsers: [],
        multilineParsers: [],
        journal: true,
      };
    });
  }

  /** The fluent-bit plugin (`Name`). */
  public readonly pluginName: string;
  /** The alias given in the options, if any. */
  public readonly alias?: string;
  /** The records' tag. */
  public readonly tag: string;

  private readonly render: (alias: string, ctx: InputRenderContext) => Omit<RenderedInput, 'entries'> & { entries: [string, string | undefined][] };

  private constructor(
    pluginName: string,
    common: InputCommonOptions,
    render: (alias: string, ctx: InputRenderContext) => Omit<RenderedInput, 'entries'> & { entries: [string, string | undefined][] },
  ) {
    this.pluginName = pluginName;
    this.alias = common.alias;
    this.tag = common.tag;
    this.render = render;
    if (!/^[A-Za-z0-9_.\-*]+$/.test(common.tag)) {
      throw new ValidationError(`FluentBitInput.${pluginName}`, `tag ${JSON.stringify(common.tag)} must be letters, digits, '.', '-', '_' (and '*').`);
    }
    if (/^kube\./.test(common.tag)) {
      throw new ValidationError(`FluentBitInput.${pluginName}`, `tag ${JSON.stringify(common.tag)} starts with kube.: the kubernetes filter would take it for a container log `
        + 'and look up a pod that does not exist. Use another prefix, e.g. \'host.\'.');
    }
    if (common.alias !== undefined && !/^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$/.test(common.alias)) {
      throw new ValidationError(`FluentBitInput.${pluginName}`, `alias ${JSON.stringify(common.alias)} must be letters, digits, '-' and '_'.`);
    }
    // Every value must be one classic-mode line: checked now, so the error names the factory.
    for (const [key, value] of render(common.alias ?? pluginName, { stateDir: '/var/lib/log-collector', storage: [] }).entries) {
      if (value === undefined) continue;
      const problem = writableEntryProblem('INPUT', key, value);
      if (problem !== undefined) throw new ValidationError(`FluentBitInput.${pluginName}`, problem);
    }
  }

  /**
   * The `[INPUT]` entries under `alias`.
   * @internal
   */
  public _render(alias: string, ctx: InputRenderContext): RenderedInput {
    const r = this.render(alias, ctx);
    const entries: ClassicEntry[] = [
      { key: 'Name', value: this.pluginName },
      { key: 'Alias', value: alias },
      { key: 'Tag', value: this.tag },
      ...r.entries.filter((e): e is [string, string] => e[1] !== undefined).map(([key, value]) => ({ key, value })),
      ...ctx.storage,
    ];
    return { ...r, entries };
  }
}
brand(FluentBitInput, 'FluentBitInput');
