// The image catalogue as the launcher offers it (seeds, "Environments"): general images
// grouped by repository into Environments, their tags the Versions, the chosen image's
// canonical name the Image Name; the images the user made from sessions in a group of their
// own ("Customized"). Pure logic, and the GraphQL query that loads the catalogue.
import { gql } from './api';
import type { ImageNode } from './imageTypes';
import { parseSize } from './validate';

export type { ImageNode };

/** What is launched when nothing else is chosen (an alias of the catalogue). */
export const DEFAULT_IMAGE = 'python';

/** The label holding the name the owner gave an image made from a session. */
export const CUSTOMIZED_NAME_LABEL = 'ai.backend.customized-image.name';

export const IMAGE_FIELDS =
  'id name registry architecture tag digest size_bytes aliases installed installed_agents canonical_name humanized_name labels { key value } resource_limits { key min max } tags { key value } apps';

/** Every image the caller may launch: the general ones and their own customized ones. */
export async function loadImages(): Promise<ImageNode[]> {
  const d = await gql<{ images: ImageNode[] | null }>(`query { images { ${IMAGE_FIELDS} } }`);
  return d.images ?? [];
}

/** Words of repository names written better than capitalized. */
const NICER: Record<string, string> = {
  ai: 'AI', cpp: 'C++', cuda: 'CUDA', gpu: 'GPU', llm: 'LLM', ml: 'ML', ngc: 'NGC', nodejs: 'Node.js', pytorch: 'PyTorch',
  r: 'R', tensorflow: 'TensorFlow', vllm: 'vLLM',
};

/** An environment's name from its repository: `bai/python-ml` → `Python ML`. */
export function environmentLabel(name: string): string {
  const base = name.split('/').pop() || name;
  return base
    .split(/[-_]+/)
    .filter((w) => w !== '')
    .map((w) => NICER[w.toLowerCase()] ?? w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

/** A version as the Version list shows it: `3.11-bookworm` → `3.11 (bookworm)`. */
export function versionLabel(tag: string): string {
  const k = tag.indexOf('-');
  return k > 0 ? `${tag.slice(0, k)} (${tag.slice(k + 1)})` : tag;
}

/** Newer versions first, numbers compared as numbers (`3.10` before `3.9`). */
export function compareTags(a: string, b: string): number {
  return b.localeCompare(a, 'en', { numeric: true });
}

const label = (i: ImageNode, key: string) => i.labels.find((l) => l.key === key)?.value;

/** An image made from a session. */
export function isCustomized(i: ImageNode): boolean {
  return i.tags.some((t) => t.key === 'Customized') || label(i, CUSTOMIZED_NAME_LABEL) !== undefined;
}

/** The name the owner gave an image made from a session. */
export function customizedName(i: ImageNode): string {
  return label(i, CUSTOMIZED_NAME_LABEL) ?? i.humanized_name.replace(/ \(Customized\)$/, '');
}

/** One environment: a repository and its images, newest version first. */
export interface Environment {
  key: string;
  label: string;
  images: ImageNode[];
}

export interface Catalogue {
  environments: Environment[];
  /** The caller's images made from sessions, by name. */
  customized: ImageNode[];
}

/** The catalogue grouped for the launcher; system images (the platform's own) are left out. */
export function groupImages(images: ImageNode[]): Catalogue {
  const byName = new Map<string, ImageNode[]>();
  const customized: ImageNode[] = [];
  for (const i of images) {
    if (label(i, 'ai.backend.role') === 'SYSTEM') continue;
    if (isCustomized(i)) customized.push(i);
    else byName.set(i.name, [...(byName.get(i.name) ?? []), i]);
  }
  const environments = [...byName.entries()]
    .map(([key, list]) => ({ key, label: environmentLabel(key), images: [...list].sort((a, b) => compareTags(a.tag, b.tag)) }))
    .sort((a, b) => a.label.localeCompare(b.label) || a.key.localeCompare(b.key));
  customized.sort((a, b) => customizedName(a).localeCompare(customizedName(b)));
  return { environments, customized };
}

/** The image a launch reference names: its canonical name, an alias, the reference with
 *  `:latest`, or its id. */
export function findImage(images: ImageNode[], ref: string): ImageNode | undefined {
  const r = ref.trim();
  if (r === '') return undefined;
  return (
    images.find((i) => i.canonical_name === r) ??
    images.find((i) => i.aliases.includes(r)) ??
    images.find((i) => i.canonical_name === `${r}:latest`) ??
    images.find((i) => i.id === r)
  );
}

/** What the launcher chooses first: the image `python` names, else the first environment's
 *  newest version. */
export function defaultImage(images: ImageNode[]): ImageNode | undefined {
  const aliased = findImage(images, DEFAULT_IMAGE);
  if (aliased && !isCustomized(aliased)) return aliased;
  const { environments } = groupImages(images);
  return (environments.find((e) => e.key.endsWith(`/${DEFAULT_IMAGE}`)) ?? environments[0])?.images[0];
}

/** The least an image needs to run, from its labels; 0 where it says nothing. */
export interface Minimum {
  cpu: number;
  memGiB: number;
}

/** A size as image labels give it (`64m`, `256m`, `1g`), in GiB; null when it is not one. */
export function sizeGiB(text: string): number | null {
  const b = parseSize(text);
  return b === null ? null : b / 2 ** 30;
}

export function minimumOf(i: ImageNode | undefined): Minimum {
  const min = (key: string) => i?.resource_limits.find((l) => l.key === key)?.min ?? null;
  const cpu = Number(min('cpu') ?? '');
  const mem = min('mem');
  return { cpu: Number.isFinite(cpu) && cpu > 0 ? cpu : 0, memGiB: (mem !== null && sizeGiB(mem)) || 0 };
}

/** `value` raised to at least `min`, on a multiple of `step` (a slider's). */
export function raiseTo(value: number, min: number, step: number): number {
  if (value >= min) return value;
  const n = Math.ceil(min / step - 1e-9) * step;
  return Math.round(n * 1e6) / 1e6;
}

/** `0.0625` GiB → `64 MiB`; `1.5` → `1.5 GiB`. */
export function formatGiB(g: number): string {
  if (g < 1) return `${Math.round(g * 1024)} MiB`;
  return `${Math.round(g * 100) / 100} GiB`;
}

/** The catalogue as suggestions of a free image field: general images, then the caller's
 *  customized ones. */
export function imageOptions(images: ImageNode[]): { value: string; label: string }[] {
  const { environments, customized } = groupImages(images);
  return [
    ...environments.flatMap((e) => e.images.map((i) => ({ value: i.canonical_name, label: `${e.label} ${versionLabel(i.tag)}: ${i.canonical_name}` }))),
    ...customized.map((i) => ({ value: i.canonical_name, label: `${customizedName(i)} (Customized): ${i.canonical_name}` })),
  ];
}
