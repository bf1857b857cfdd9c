// The environments the launcher and the Serving page offer (bai's images; an image name can
// also be typed).
export const ENVIRONMENTS: { value: string; label: string }[] = [{ value: 'python', label: 'Python 3.11 (Debian bookworm)' }];
