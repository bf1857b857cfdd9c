// My Environments (seeds, "remove the existing customized image and try again"): the images
// the user made from their sessions, what each is and where it came from, how many they may
// keep, and forgetting or purging one. Pure logic, and the GraphQL that loads and changes them.
import { formatBytes, gql } from './api';
import { customizedName, IMAGE_FIELDS, ImageNode } from './images';

/** The user's customized images, by name. */
export async function loadCustomized(): Promise<ImageNode[]> {
  const d = await gql<{ customized_images: ImageNode[] | null }>(`query { customized_images { ${IMAGE_FIELDS} } }`);
  return sortByName(d.customized_images ?? []);
}

/** How many images the user may make from sessions; null when the server does not say. */
export async function loadLimit(): Promise<number | null> {
  const d = await gql<{ user_resource_policy: { max_customized_image_count: number } | null }>('query { user_resource_policy { max_customized_image_count } }');
  return d.user_resource_policy?.max_customized_image_count ?? null;
}

/** What removes an image: Forget takes it off the user's list (and limit), the engine keeps its
 *  files; Purge removes it from every agent's engine too. */
export type Removal = 'forget' | 'purge';
const MUTATION: Record<Removal, string> = { forget: 'forget_image_by_id', purge: 'purge_image_by_id' };

/** Forgets or purges an image by its id; rejects with the server's reason. */
export async function removeImage(how: Removal, id: string): Promise<void> {
  const field = MUTATION[how];
  const d = await gql<Record<string, { ok: boolean; msg: string } | null>>(`mutation($id: String!) { ${field}(image_id: $id) { ok msg } }`, { id });
  const r = d[field];
  if (!r?.ok) throw new Error(r?.msg || `The image could not be ${how === 'forget' ? 'forgotten' : 'purged'}.`);
}

export function sortByName(images: ImageNode[]): ImageNode[] {
  return [...images].sort((a, b) => customizedName(a).localeCompare(customizedName(b)) || a.canonical_name.localeCompare(b.canonical_name));
}

/** The image a customized one was made from: its reference less the `-customized_<id>` part
 *  the server adds to the base's tag (`bai/python:3.11-bookworm-customized_ab12` →
 *  `bai/python:3.11-bookworm`); null when the reference is not one of those. */
export function baseImageOf(reference: string): string | null {
  const k = reference.lastIndexOf(':');
  if (k < 0 || reference.slice(k).includes('/')) return null;
  const parts = reference.slice(k + 1).split('-');
  const kept = parts.filter((p) => !p.startsWith('customized_'));
  if (kept.length === parts.length || kept.length === 0) return null;
  return `${reference.slice(0, k)}:${kept.join('-')}`;
}

const label = (i: ImageNode, key: string) => i.labels.find((l) => l.key === key)?.value;

/** Where an image came from, in words: the session's image (the server labels no session,
 *  the reference names the base), and who made it when a label says so. */
export function originOf(i: ImageNode): string {
  const base = baseImageOf(i.canonical_name);
  const by = label(i, 'ai.backend.customized-image.user.email');
  const from = base ? `a session of ${base}` : 'a session';
  return by ? `${from}, by ${by}` : from;
}

/** An image's size as the page shows it; `-` when the engine has not said. */
export function imageSize(i: ImageNode): string {
  return i.size_bytes > 0 ? formatBytes(i.size_bytes) : '-';
}

/** `1 of 3 customized images` (`1 customized image` without a known limit). */
export function countText(count: number, limit: number | null): string {
  const noun = (n: number) => `customized image${n === 1 ? '' : 's'}`;
  return limit === null ? `${count} ${noun(count)}` : `${count} of ${limit} ${noun(limit)}`;
}

/** What the commit dialog says when the user may make no more images (null while they may):
 *  how many they have of how many, and where to remove one. */
export function limitMessage(count: number, limit: number | null): string | null {
  if (limit === null || count < limit) return null;
  if (limit <= 0) return 'Your resource policy allows no customized images.';
  return `You have ${count} of ${limit} customized images; remove one in My Environments`;
}

/** Whether a server's refusal of a conversion is the customized image limit. */
export function isQuotaRefusal(e: unknown): boolean {
  const x = e as { type?: unknown; message?: unknown } | null;
  return !!x && ((typeof x.type === 'string' && x.type.endsWith('quota-exceeded')) || (typeof x.message === 'string' && /customized image count quota/.test(x.message)));
}

/** The images of the user with `email` among those the server lists (an admin is listed
 *  everyone's); an image without the owner's email label is taken as the caller's. */
export function ownedBy(images: ImageNode[], email: string): ImageNode[] {
  return images.filter((i) => {
    const owner = label(i, 'ai.backend.customized-image.user.email');
    return owner === undefined || owner.toLowerCase() === email.toLowerCase();
  });
}
