// Settings pages for inbound sources and outbound webhooks: copy buttons.
// Loaded as a file (the Content-Security-Policy allows no inline script).
(function () {
  'use strict';

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    // Plain http on another host than localhost: the clipboard API is not offered; select and copy instead.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    if (!ok) throw new Error('copy refused');
  }

  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    const label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    try {
      await copyText(source.textContent);
      button.textContent = 'Copied';
      button.classList.add('copied');
    } catch {
      // Leave the text selected so the user can press Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = 'Press Ctrl+C';
    }
    setTimeout(() => {
      button.textContent = label;
      button.classList.remove('copied');
    }, 2500);
  });
})();
