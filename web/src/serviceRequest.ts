// The body of `POST /services` (a model service), made from what a form holds: the Serving
// page's "Create service" dialog and the launcher's Inference type both make theirs here, so
// a service is asked for the same way whichever way the user came.
import type { Schema } from './api';
import { body, LaunchSettings } from './launch';
import * as v from './validate';

type Amounts = Record<string, Schema<'NumberOrText'>>;

/** What a service is made of, as the forms hold it. */
export interface ServiceFields {
  /** Empty: the server picks one. */
  name: string;
  /** The model folder (usage mode `model`), by name. */
  model: string;
  image: string;
  /** The resource group. */
  scalingGroup: string;
  /** Per replica (per container of a cluster). */
  resources: Amounts;
  resourceOpts?: Amounts;
  environ?: Record<string, string>;
  replicas: number;
  public: boolean;
  /** The project; null: the server's default. */
  project?: string | null;
  clusterMode?: Schema<'ClusterMode'> | null;
  clusterSize?: number | null;
  /** Administrators: whose the replicas are. */
  ownerAccessKey?: string | null;
}

/** The body of `POST /services` (every optional field `null`, as the official client sends). */
export function newServiceBody(f: ServiceFields): Schema<'NewService'> {
  const config: Schema<'ServiceConfig'> = {
    model: f.model,
    scaling_group: f.scalingGroup,
    resources: f.resources,
    resource_opts: f.resourceOpts ?? {},
    environ: f.environ ?? {},
    extra_mounts: null,
    model_definition_path: null,
    model_mount_destination: null,
    model_version: null,
    vfolder_subpath: null,
  };
  return {
    name: f.name.trim() || null,
    replicas: f.replicas,
    image: f.image.trim(),
    open_to_public: f.public,
    config,
    arch: null, bootstrap_script: null, callback_url: null,
    cluster_mode: f.clusterMode ?? null,
    cluster_size: f.clusterSize ?? null,
    domain: null,
    group: f.project ?? null,
    owner_access_key: f.ownerAccessKey ?? null,
    runtime_variant: null, startup_command: null, tag: null,
  };
}

/** The service the launcher's Inference type asks for: its image, resources (per replica),
 *  environment, resource group, project, cluster shape and owner, as a session would have
 *  them, served from the chosen model folder. */
export function launchServiceBody(s: LaunchSettings, accelSlot: string | null): Schema<'NewService'> {
  const b = body(s, accelSlot);
  return newServiceBody({
    name: s.name,
    model: s.model,
    image: b.image,
    scalingGroup: s.group,
    resources: b.config?.resources ?? {},
    resourceOpts: b.config?.resource_opts ?? {},
    environ: b.config?.environ ?? {},
    replicas: s.replicas,
    public: s.openToPublic,
    project: s.project,
    clusterMode: s.clusterSize > 1 ? s.clusterMode : null,
    clusterSize: s.clusterSize > 1 ? s.clusterSize : null,
    ownerAccessKey: s.ownerAccessKey,
  });
}

/** A field of a service form that a server problem can name. */
export type ServiceField = NonNullable<ReturnType<typeof v.serviceProblemField>>;

/** The launcher page each such field is on (the service's name and model folder on the first,
 *  the image, resources and replicas on the second). */
export const SERVICE_FIELD_STEP: Record<ServiceField, number> = { name: 0, model: 0, image: 1, replicas: 1, cpu: 1, mem: 1 };

/** Where the launcher shows a server's refusal of its service: the field (and its page) the
 *  message names, else none (the review page's error card). */
export function launchServiceProblem(msg: string): { field: ServiceField | null; step: number; msg: string } {
  const field = v.serviceProblemField(msg);
  return { field, step: field ? SERVICE_FIELD_STEP[field] : 4, msg };
}

/** The field of a service a launcher setting is (what changing it may put right). */
export function settingField(k: keyof LaunchSettings): ServiceField | null {
  switch (k) {
    case 'name':
    case 'model':
    case 'replicas':
    case 'cpu':
      return k;
    case 'environment':
    case 'image':
      return 'image';
    case 'memGiB':
    case 'shmemGiB':
      return 'mem';
    default:
      return null;
  }
}
