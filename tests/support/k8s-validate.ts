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
}

const KINDS: Record<string, { model: ModelClass; schema: string }> = {
  "apps/v1 Deployment": { model: Deployment, schema: "IoK8sApiAppsV1Deployment" },
  "v1 Service": { model: Service, schema: "IoK8sApiCoreV1Service" },
  "v1 ConfigMap": { model: ConfigMap, schema: "IoK8sApiCoreV1ConfigMap" },
  "v1 Secret": { model: Secret, schema: "IoK8sApiCoreV1Secret" },
  "autoscaling/v2 HorizontalPodAutoscaler": {
    model: HorizontalPodAutoscaler,
    schema: "IoK8sApiAutoscalingV2HorizontalPodAutoscaler",
  },
  "policy/v1 PodDisruptionBudget": {
    model: PodDisruptionBudget,
    schema: "IoK8sApiPolicyV1PodDisruptionBudget",
  },
  "networking.k8s.io/v1 Ingress": { model: Ingress, schema: "IoK8sApiNetworkingV1Ingress" },
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
  const kind = KINDS[name];
  if (!kind) return [`${name}: not a kind this check knows (${Object.keys(KINDS).join(", ")})`];
  try {
    new kind.model(manifest as never).validate();
  } catch (error) {
    return [`${name}: ${(error as Error).message}`];
  }
  const { validate } = (await import(`kubernetes-models/_schemas/${kind.schema}`)) as {
    validate: (data: unknown) => boolean;
  };
  const reads: Reads = new Map();
  const copy = structuredClone(manifest);
  validate(tracked(copy, reads));
  return unread(copy, reads, "").map((path) => `${name}: ${path} is not a field of the schema`);
}
