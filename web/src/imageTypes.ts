// The catalogue's image as GraphQL `images` answers it (crates/bai-api/src/images/mod.rs,
// `Image`): the document calls GraphQL answers "free JSON", so it is written here, with every
// field the launcher asks for. The images area's REST bodies are the document's
// (`Schema<'CommitStatus'>`, `Schema<'BgTaskEvent'>`, …).

export interface KeyValue {
  key: string;
  value: string;
}

/** A minimum (and maximum) resource of an image, from its labels (`cpu` "1", `mem` "256m"). */
export interface ResourceLimit {
  key: string;
  min: string | null;
  max: string | null;
}

/** An image of the catalogue, with every field the launcher asks GraphQL `images` for. */
export interface ImageNode {
  id: string;
  /** The repository path (`bai/python`). */
  name: string;
  registry: string;
  architecture: string;
  tag: string;
  digest: string;
  size_bytes: number;
  aliases: string[];
  installed: boolean;
  installed_agents: string[];
  /** The full reference a session is launched with. */
  canonical_name: string;
  /** `NAME (Customized)` for an image made from a session. */
  humanized_name: string;
  labels: KeyValue[];
  resource_limits: ResourceLimit[];
  /** `Customized` for an image made from a session. */
  tags: KeyValue[];
  apps: string[];
}
