import { UsageError } from './args';
import { coverageCommand } from './coverage-command';
import { doctorCommand } from './doctor-command';
import { estimateCommand } from './estimate-command';
import type { CliIo } from './io';
import { labelCommand } from './label-command';
import { planCommand } from './plan-command';
import { sizeCommand } from './size-command';
import { terminalSafe, terminalSafeLines } from '../util/output-escape';

export const MAIN_HELP = `Usage: node-agents <command> [flags]

Check node agents (DaemonSets) against a node inventory before deploying them.

Commands:
  coverage   which nodes each agent covers, and exactly why not (taints, selectors,
             affinity, NotReady, Windows/virtual); flags gaps, duplicates, empty waves,
             host port clashes
  label      assign nodes to rollout waves: kubectl label commands, JSON or node-pool labels
  estimate   rollout time per agent and wave, pods at once, blast radius
  plan       what a change of manifests does on every node: pods replaced, moved, added,
             removed, batches and time, and what can go wrong (two pods, stalls, restarts)
  doctor     why a running rollout is stuck and why a node has no healthy agent, from a
             dump of nodes, pods, DaemonSets, ControllerRevisions and events
  size       requests and memory limits per node group from Prometheus usage (VPA's
             recommender), as resourceProfiles props, and what the change would do

Run \`node-agents <command> --help\` for a command's flags.
The node inventory is the output of \`kubectl get nodes -o json\`.

Exit codes: 0 ok, 1 problems found, 2 bad usage or input.
`;

const COMMANDS: Record<string, (argv: readonly string[], io: CliIo) => number> = {
  coverage: coverageCommand,
  label: labelCommand,
  estimate: estimateCommand,
  plan: planCommand,
  doctor: doctorCommand,
  size: sizeCommand,
};

/**
 * The whole CLI as a function: `argv` without node and the script (process.argv.slice(2)).
 * Returns the exit code: 0 ok, 1 problems found, 2 bad usage or input. Never throws.
 */
export function runCli(argv: readonly string[], given: CliIo): number {
  // Every byte the CLI writes passes here: escape sequences, bidi overrides and other controls from
  // names in the input are written as their codes (the CLI's own newlines kept). Values are also
  // escaped one by one where a newline of theirs could forge a line.
  const io: CliIo = {
    stdout: { write: (text: string) => given.stdout.write(terminalSafeLines(text)) },
    stderr: { write: (text: string) => given.stderr.write(terminalSafeLines(text)) },
    cwd: given.cwd,
  };
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    (command === undefined ? io.stderr : io.stdout).write(MAIN_HELP);
    return command === undefined ? 2 : 0;
  }
  const run = Object.prototype.hasOwnProperty.call(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (run === undefined) {
    io.stderr.write(`node-agents: unknown command "${terminalSafe(command)}"; the commands are ${Object.keys(COMMANDS).join(', ')} (node-agents --help)\n`);
    return 2;
  }
  try {
    return run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`node-agents ${error.command ?? command}: ${terminalSafe(error.message)}\nRun \`node-agents ${error.command ?? command} --help\` for usage.\n`);
    } else if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError) {
      // not an input error the CLI recognised: a defect, said as such (the fuzz tests look for this line)
      io.stderr.write(`node-agents ${command}: internal error (${error.name}: ${terminalSafe(error.message)}); please report it with the input's shape\n`);
    } else {
      // Input errors (unreadable file, not JSON, not a NodeList, no DaemonSet) carry a complete message.
      io.stderr.write(`node-agents ${command}: ${terminalSafe(error instanceof Error ? error.message : String(error))}\n`);
    }
    return 2;
  }
}
