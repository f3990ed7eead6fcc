import { useEffect, useState } from 'preact/hooks';

/** The page's path; links call `navigate` so the app stays one page (the server answers index.html for any non-/api path). */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    addEventListener('popstate', update);
    addEventListener('skiff:navigate', update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener('skiff:navigate', update);
    };
  }, []);
  return path;
}

export function navigate(to: string): void {
  history.pushState(null, '', to);
  dispatchEvent(new Event('skiff:navigate'));
  // Keyboard and screen-reader users land on the new page's heading.
  requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

/** Click handler of an in-app link: a modified click (new tab) keeps the browser's behaviour. */
export function linkTo(to: string) {
  return (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
}
