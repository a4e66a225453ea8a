import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";

/**
 * A manifest checked against the Kubernetes OpenAPI schemas (the kubernetes-models package): its
 * kind must be one the chart is meant to make, its fields of the right types and the required ones
 * there. The schemas accept properties they do not know (a misspelt `readinesProbe` would pass),
 * so the validator also runs over a proxy of the manifest that records which properties it looks
 * at: a property it never read is not in the schema.
 */
interface ModelClass {
  new (data: never): { validate(): void; toJSON(): unknown };
  prototype: { validate(this: unknown): void };
}

const KINDS: Record<string, ModelClass> = {
  "apps/v1 Deployment": Deployment,
  "v1 Service": Service,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "autoscaling/v2 HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1 Ingress": Ingress,
};

type Reads = Map<object, Set<PropertyKey>>;

function tracked(value: unknown, reads: Reads): unknown {
  if (value === null || typeof value !== "object") return value;
  const seen = new Set<PropertyKey>();
  reads.set(value, seen);
  return new Proxy(value, {
    get(target, key, receiver) {
      seen.add(key);
      return tracked(Reflect.get(target, key, receiver), reads);
    },
  });
}

function unread(value: unknown, reads: Reads, path: string): string[] {
  if (value === null || typeof value !== "object") return [];
  const seen = reads.get(value) ?? new Set();
  return Object.entries(value).flatMap(([key, child]) =>
    !Array.isArray(value) && !seen.has(key) ? [`${path}/${key}`] : unread(child, reads, `${path}/${key}`),
  );
}

/** What is wrong with one manifest (empty when nothing is). */
export async function manifestProblems(manifest: Record<string, unknown>): Promise<string[]> {
  const name = `${manifest.apiVersion} ${manifest.kind}`;
  const model = KINDS[name];
  if (!model) return [`${name}: not a kind this check knows (${Object.keys(KINDS).join(", ")})`];
  try {
    new model(manifest as never).validate();
  } catch (error) {
    return [`${name}: ${(error as Error).message}`];
  }
  // A model's validate() runs its schema's validator over `this`; run over a proxy of a copy, it
  // tells which properties the schema looked at (the package does not export its validators).
  const reads: Reads = new Map();
  const copy = structuredClone(manifest);
  model.prototype.validate.call(tracked(copy, reads));
  return unread(copy, reads, "").map((path) => `${name}: ${path} is not a field of the schema`);
}
