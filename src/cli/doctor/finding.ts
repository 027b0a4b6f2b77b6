/** What `doctor` finds on a node: shared by diagnose.ts and the findings it gathers from other modules. */
import { DoctorCause } from '../../rollout/stuck-causes';

export interface DoctorFinding {
  readonly cause: DoctorCause;
  /** error: the node has no working agent, or the rollout is blocked; warning: it waits its turn, or the model cannot tell */
  readonly severity: 'error' | 'warning';
  /** `namespace/name` */
  readonly daemonSet: string;
  readonly node: string;
  /** `namespace/name` of the pod concerned, when there is one */
  readonly pod?: string;
  readonly message: string;
  readonly fix: string;
}
