/**
 * Late net on the size of every object a construct renders (see src/agent/object-size): run at
 * synthesis, when the objects' JSON is final.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { checkObjectSize } from '../agent/object-size';

/** Adds a validation to `construct` refusing any object below it that is too large to apply. */
export function addObjectSizeValidation(construct: IConstruct, where: string): void {
  construct.node.addValidation({
    validate: () => construct.node.findAll()
      .filter((c): c is ApiObject => ApiObject.isApiObject(c))
      .flatMap((o) => checkObjectSize(o.toJson()).problems.map((p) => `${where}: ${p}`)),
  });
}
