// Passkeys (issue 26), through SimpleWebAuthn's browser half. On the sign-in page and the
// profile it shows the passkey forms ([data-passkey-offer]) only where the browser has
// WebAuthn: without it, or without JavaScript, they stay hidden. On a ceremony page
// (form[data-passkey-ceremony]) it hands the options the page carries to the browser at
// once, puts the answer in the form and sends it; a failure says why and offers a retry.
import { browserSupportsWebAuthn, startAuthentication, startRegistration, WebAuthnError } from '@simplewebauthn/browser';

const supported = browserSupportsWebAuthn();
for (const offer of document.querySelectorAll<HTMLElement>('[data-passkey-offer]')) offer.hidden = !supported;
for (const note of document.querySelectorAll<HTMLElement>('[data-passkey-unsupported]')) note.hidden = supported;

/** What to tell the person when the browser's prompt fails. */
function problemText(error: unknown, kind: string): string {
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
    return 'This device already holds a passkey of your account. Use it, or add a passkey on another device.';
  }
  if (error instanceof Error && (error.name === 'NotAllowedError' || error.name === 'AbortError')) {
    return kind === 'register'
      ? 'No passkey was created: the prompt was closed or timed out. Press “Try again”.'
      : 'No passkey was used: the prompt was closed or timed out, or this device holds no passkey for this site. Press “Try again”, or sign in another way.';
  }
  return `The browser could not use a passkey${error instanceof Error ? ` (${error.message})` : ''}. Press “Try again”, or go back.`;
}

const form = document.querySelector<HTMLFormElement>('form[data-passkey-ceremony]');
if (form) {
  const kind = form.dataset.passkeyCeremony ?? '';
  const status = form.querySelector<HTMLElement>('[data-passkey-status]');
  const retry = form.querySelector<HTMLButtonElement>('[data-passkey-go]');
  const answer = form.querySelector<HTMLInputElement>('input[name="response"]');
  const say = (text: string) => {
    if (status) status.textContent = text;
  };
  const run = async () => {
    if (retry) retry.hidden = true;
    say('Waiting for your passkey…');
    try {
      const optionsJSON = JSON.parse(form.dataset.options ?? '{}');
      const response = kind === 'register' ? await startRegistration({ optionsJSON }) : await startAuthentication({ optionsJSON });
      if (answer) answer.value = JSON.stringify(response);
      say('Checking…');
      form.submit();
    } catch (error) {
      say(problemText(error, kind));
      if (retry) retry.hidden = false;
    }
  };
  retry?.addEventListener('click', () => void run());
  if (supported) void run();
  else say('This browser cannot use passkeys. Go back and sign in another way.');
}
