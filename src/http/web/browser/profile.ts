// The profile page's copy button. Progressive enhancement: without this script the
// button stays hidden and the key is plain selectable text.
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  const target = document.getElementById(button.dataset.copy ?? '');
  const status = document.getElementById('copy-status');
  if (!target) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = (target.textContent ?? '').trim();
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch {
      // No clipboard API (plain http, old browser): select the key instead.
      const range = document.createRange();
      range.selectNodeContents(target);
      const selection = window.getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
      copied = document.execCommand('copy');
    }
    if (status) status.textContent = copied ? 'Copied to the clipboard.' : 'The key is selected: press Ctrl+C (⌘C) to copy it.';
  });
}
