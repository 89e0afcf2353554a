// My files, progressive enhancement: drag and drop, one request per file with a progress
// bar each, a list that refreshes when the uploads are done, and copy buttons. Without
// this script every form still works (the upload form posts all files at once).

const form = document.getElementById('upload-form');
const list = document.getElementById('upload-list');
const MAX_PARALLEL = 3;

/** Units as the server prints them (format.ts): 1023 B, 1.0 KiB, 48.2 MiB. */
function humanSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = -1;
  do {
    value /= 1024;
    unit++;
  } while (value >= 1024 && unit < units.length - 1);
  return `${value.toFixed(1)} ${units[unit]}`;
}

function element(tag, attributes = {}, text = '') {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

/** Copy buttons: `data-copy-text` holds the text; hidden until this script shows them. */
function enableCopyButtons(root) {
  for (const button of root.querySelectorAll('button[data-copy-text]')) {
    if (button.dataset.ready) continue;
    button.dataset.ready = '1';
    button.hidden = false;
    const label = button.textContent;
    button.addEventListener('click', async () => {
      let copied = false;
      try {
        await navigator.clipboard.writeText(button.dataset.copyText);
        copied = true;
      } catch {
        // No clipboard API (plain http): copy through a selected, off-screen text field.
        const field = element('textarea', { class: 'offscreen', readonly: '' });
        field.value = button.dataset.copyText;
        document.body.append(field);
        field.select();
        copied = document.execCommand('copy');
        field.remove();
      }
      button.textContent = copied ? 'Copied' : 'Press Ctrl+C';
      setTimeout(() => (button.textContent = label), 2000);
    });
  }
}

/** Replaces the folder and file lists with the server's current ones. */
async function refreshLists() {
  const response = await fetch(location.href, { headers: { Accept: 'text/html' }, credentials: 'same-origin' });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
  for (const id of ['folders', 'files']) {
    const now = document.getElementById(id);
    const next = fresh.getElementById(id);
    if (now && next) now.replaceWith(document.adoptNode(next));
  }
  enableCopyButtons(document);
}

/** The row of one upload: name, size, progress bar, status line. */
function uploadRow(file) {
  const row = element('li', { class: 'upload' });
  const head = element('div', { class: 'upload-head' });
  head.append(element('span', { class: 'file-name' }, file.name), element('span', { class: 'file-meta' }, humanSize(file.size)));
  const bar = element('progress', { class: 'bar', max: '100', value: '0', 'aria-label': `Upload of ${file.name}` });
  const status = element('p', { class: 'upload-status' }, 'Waiting…');
  row.append(head, bar, status);
  list.append(row);
  return { row, bar, status };
}

/** Shows the links of a stored file in its row. */
function showLinks(row, stored) {
  const links = element('dl', { class: 'links' });
  const download = element('dd');
  download.append(element('a', { href: stored.download }, stored.download), ' ');
  download.append(element('button', { class: 'button small secondary', type: 'button', 'data-copy-text': stored.download }, 'Copy'));
  const remove = element('dd');
  remove.append(element('a', { class: 'delete-link', href: stored.delete }, stored.delete));
  links.append(element('dt', {}, 'Download link'), download, element('dt', {}, 'Delete link'), remove);
  row.append(links);
  enableCopyButtons(row);
}

/** Uploads one file with its own request, updating its bar; resolves when it is over. */
function upload(file, ui) {
  return new Promise((resolve) => {
    const body = new FormData();
    // The token and the folder come before the file: the server reads them first.
    for (const field of form.querySelectorAll('input[type="hidden"]')) body.append(field.name, field.value);
    body.append('upload', file, file.name);
    const request = new XMLHttpRequest();
    request.open('POST', form.action);
    request.setRequestHeader('Accept', 'application/json');
    ui.status.textContent = 'Uploading…';
    request.upload.addEventListener('progress', (event) => {
      if (!event.lengthComputable) return;
      // The last percent is the server's: it is reached once the file is stored.
      ui.bar.value = Math.min(99, Math.floor((event.loaded / event.total) * 100));
      if (event.loaded === event.total) ui.status.textContent = 'Saving…';
    });
    const fail = (message) => {
      ui.row.classList.add('failed');
      ui.status.textContent = message;
      ui.status.classList.add('error');
      resolve(false);
    };
    request.addEventListener('load', () => {
      let answer = null;
      try {
        answer = JSON.parse(request.responseText);
      } catch {
        // Not our JSON (a proxy's error page): report the status.
      }
      const stored = answer?.files?.[0];
      if (request.status === 201 && stored && !stored.error) {
        ui.bar.value = 100;
        ui.row.classList.add('done');
        ui.status.textContent = 'Uploaded';
        showLinks(ui.row, stored);
        resolve(true);
      } else {
        fail(stored?.error ?? answer?.error ?? `Upload failed (HTTP ${request.status}).`);
      }
    });
    request.addEventListener('error', () => fail('Upload failed: the connection was lost.'));
    request.addEventListener('abort', () => fail('Upload cancelled.'));
    request.send(body);
  });
}

/** Uploads files a few at a time, then refreshes the lists. */
async function uploadAll(files) {
  if (files.length === 0) return;
  const queue = files.map((file) => ({ file, ui: uploadRow(file) }));
  const workers = Array.from({ length: Math.min(MAX_PARALLEL, queue.length) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await upload(next.file, next.ui);
  });
  await Promise.all(workers);
  await refreshLists().catch(() => {});
}

if (form && list) {
  const input = document.getElementById('upload-files');
  const zone = document.getElementById('drop-zone');
  const hint = document.getElementById('drop-hint');
  document.getElementById('upload-button').hidden = true;
  input.required = false;
  hint.textContent = 'Choose files or drop them here: each one starts uploading at once.';
  zone.classList.add('ready');

  input.addEventListener('change', () => {
    const files = [...input.files];
    input.value = '';
    uploadAll(files);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const files = [...input.files];
    input.value = '';
    uploadAll(files);
  });
  // The whole upload card takes drops, the dashed zone shows it.
  const target = form.closest('section') ?? zone;
  target.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  target.addEventListener('dragleave', (event) => {
    if (!target.contains(event.relatedTarget)) zone.classList.remove('over');
  });
  target.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    uploadAll([...event.dataTransfer.files]);
  });
}

enableCopyButtons(document);
