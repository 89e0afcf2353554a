/** An element with attributes and, if given, text (user data reaches the page only as text or attribute values, never as markup). */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

/** Copy buttons: `data-copy-text` holds the text; hidden until this script shows them. */
export function enableCopyButtons(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-copy-text]')) {
    if (button.dataset.ready) continue;
    button.dataset.ready = '1';
    button.hidden = false;
    const label = button.textContent;
    const text = button.dataset.copyText ?? '';
    button.addEventListener('click', async () => {
      let copied = false;
      try {
        await navigator.clipboard.writeText(text);
        copied = true;
      } catch {
        // No clipboard API (plain http): copy through a selected, off-screen text field.
        const field = element('textarea', { class: 'offscreen', readonly: '' });
        field.value = text;
        document.body.append(field);
        field.select();
        copied = document.execCommand('copy');
        field.remove();
      }
      button.textContent = copied ? 'Copied' : 'Press Ctrl+C';
      window.setTimeout(() => {
        button.textContent = label;
      }, 2000);
    });
  }
}
