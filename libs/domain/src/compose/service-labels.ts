/**
 * The last rewrites of a stack's file before it runs on a server (the agent makes them, after
 * `convertedCompose`):
 *
 * `labelComposeServices(file, labels, {swarm})`: every service carries Skiff's labels
 * (`skiff.managed`, `skiff.kind`, `skiff.id`), so the stack's containers and Swarm services are
 * found by label like every other Skiff object. Compose puts a service's `labels` on its
 * containers; a Swarm stack (`swarm: true`) needs them on the service too, under
 * `deploy.labels`, and gets both. The labels given win over the file's own (a file cannot pose
 * as another workload); a list (`- key=value`) or a mapping keeps its form.
 *
 * `withStackVersion(file)`: `docker stack deploy` of Docker 20.10 refuses a file without a
 * top-level `version` ("unsupported Compose file version: 1.0"); a file without one gets
 * `version: "3.9"` (the newest that CLI reads). A file's own version is left as written.
 *
 * Both are idempotent and return a new file.
 */
import { isMap, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import { type ComposeFile, type ComposeInput, composeFileOf, editableServices, rootMap } from './compose-file.js';
import { ComposeError, isEmptyScalar, lookup, materialize, ownPair, resolveNode, scalarText, setValue, textScalar, type YamlNode } from './yaml-nodes.js';

export const STACK_FILE_VERSION = '3.9';

export function labelComposeServices(input: ComposeInput, labels: Readonly<Record<string, string>>, options: { swarm: boolean }): ComposeFile {
  const file = composeFileOf(input).copy();
  const document = file.document;
  for (const { name, definition } of editableServices(document)) {
    setLabels(document, definition, labels, `the labels of service "${name}"`);
    if (!options.swarm) continue;
    let deploy = resolveNode(document, lookup(document, definition, 'deploy'));
    if (deploy === null || isEmptyScalar(deploy)) {
      deploy = new YAMLMap();
      setValue(document, definition, 'deploy', deploy);
    } else if (!isMap(deploy)) {
      throw new ComposeError(`the deploy settings of service "${name}" must be a mapping`);
    } else if (ownPair(document, definition, 'deploy')?.value !== deploy) {
      deploy = materialize(document, deploy);
      setValue(document, definition, 'deploy', deploy);
    }
    setLabels(document, deploy as YAMLMap, labels, `the deploy labels of service "${name}"`);
  }
  return file;
}

export function withStackVersion(input: ComposeInput): ComposeFile {
  const file = composeFileOf(input).copy();
  const root = rootMap(file.document);
  if (lookup(file.document, root, 'version') !== undefined) return file;
  const version = new Scalar(STACK_FILE_VERSION);
  version.type = Scalar.QUOTE_DOUBLE;
  root.items.unshift(new Pair(textScalar('version'), version));
  return file;
}

/** Sets `labels` under `map` (`labels` as a list or a mapping; a shared, aliased one is copied first). */
function setLabels(document: ComposeFile['document'], map: YAMLMap, labels: Readonly<Record<string, string>>, what: string): void {
  let current = resolveNode(document, lookup(document, map, 'labels'));
  if (current === null || isEmptyScalar(current)) current = new YAMLMap();
  else if (ownPair(document, map, 'labels')?.value !== current) current = materialize(document, current);
  if (isMap(current)) {
    for (const [key, value] of Object.entries(labels)) setValue(document, current, key, quoted(value));
  } else if (isSeq(current)) {
    const list = current as YAMLSeq;
    list.items = list.items.filter((item) => {
      const text = scalarText(document, item as YamlNode);
      return text === null || !Object.keys(labels).some((key) => text === key || text.startsWith(`${key}=`));
    });
    for (const [key, value] of Object.entries(labels)) list.items.push(quoted(`${key}=${value}`));
  } else {
    throw new ComposeError(`${what} must be a list or a mapping`);
  }
  setValue(document, map, 'labels', current);
}

/** Label values are strings to Compose: `"true"`, never the boolean. */
function quoted(text: string): Scalar {
  const scalar = new Scalar(text);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}
