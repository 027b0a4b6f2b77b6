/**
 * Late net on every object a construct renders: run at synthesis, when the objects' JSON is final.
 * Size limits (src/agent/object-size), API rules on rendered DaemonSets (src/agent/rendered-checks),
 * and any error cdk8s-plus raises while rendering, all reported with the construct's kind and path.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { checkObjectSize } from '../agent/object-size';
import { checkRenderedDaemonSet } from '../agent/rendered-checks';

/** Adds a validation to `construct` refusing any object below it that the API server or an apply would refuse. */
export function addObjectSizeValidation(construct: IConstruct, where: string): void {
  construct.node.addValidation({
    validate: () => construct.node.findAll()
      .filter((c): c is ApiObject => ApiObject.isApiObject(c))
      .flatMap((o) => {
        let json;
        try {
          json = o.toJson();
        } catch (e) {
          // cdk8s-plus' own checks (fractional seconds, duplicate ports, probes on init containers)
          // run while rendering: give them the path they lack.
          return [`${where}: ${o.kind} "${o.name}" cannot be rendered: ${(e as Error).message}`];
        }
        const problems = [...checkObjectSize(json).problems, ...(json.kind === 'DaemonSet' ? checkRenderedDaemonSet(json) : [])];
        return problems.map((p) => `${where}: ${p}`);
      }),
  });
}
