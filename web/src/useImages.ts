// The image catalogue, loaded once per view that needs it.
import { useCallback, useEffect, useState } from 'react';
import { ApiError } from './api';
import { ImageNode, loadImages } from './images';

export interface Images {
  /** null while loading (and after a failed load). */
  images: ImageNode[] | null;
  error: string | null;
  reload: () => void;
}

export function useImages(): Images {
  const [images, setImages] = useState<ImageNode[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    let live = true;
    loadImages().then(
      (i) => {
        if (!live) return;
        setImages(i);
        setError(null);
      },
      (e) => live && setError(e instanceof ApiError ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, []);
  useEffect(reload, [reload]);
  return { images, error, reload };
}
