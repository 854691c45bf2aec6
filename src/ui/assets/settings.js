// Behaviour of the settings pages. Loaded as a file (the Content-Security-Policy allows no inline script).
(function () {
  'use strict';

  const csrf = () => document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') || '';

  function toast(message, isError) {
    const box = document.getElementById('toast');
    if (!box || !message) return;
    box.textContent = message; // text, never markup
    box.classList.toggle('error', Boolean(isError));
    box.hidden = false;
    setTimeout(() => (box.hidden = true), isError ? 6000 : 3000);
  }

  // Stages: drag by the handle; the new order is saved at once, and put back if the service refuses it.
  function initStageOrder() {
    const list = document.querySelector('.stage-list[data-reorder-url]');
    if (!list || typeof Sortable === 'undefined') return;
    Sortable.create(list, {
      handle: '.handle',
      animation: 150,
      ghostClass: 'ghost',
      onEnd: async (event) => {
        if (event.oldIndex === event.newIndex) return;
        const body = new URLSearchParams();
        list.querySelectorAll(':scope > [data-stage-id]').forEach((item) => body.append('order[]', item.dataset.stageId));
        list.classList.add('saving');
        let response;
        try {
          response = await fetch(list.dataset.reorderUrl, {
            method: 'POST',
            credentials: 'same-origin',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': csrf(), 'HX-Request': 'true' },
            body,
          });
        } catch {
          response = undefined;
        }
        const text = response ? await response.text() : '';
        list.classList.remove('saving');
        // Sortable leaves inline styles behind; the CSP would not let anything set them again.
        event.item.removeAttribute('style');
        if (!response || !response.ok) {
          list.insertBefore(event.item, list.children[event.oldIndex + (event.oldIndex > event.newIndex ? 1 : 0)] || null);
          toast(text && text.length < 300 ? text : 'The new order could not be saved.', true);
          return;
        }
        list.dataset.saved = String(Number(list.dataset.saved || '0') + 1);
        toast(text || 'Stage order saved');
      },
    });
  }

  // A page showing a secret once: a reload must ask for the plain list, not post the form again.
  function replaceUrl() {
    const holder = document.querySelector('[data-replace-url]');
    if (holder) history.replaceState(null, '', holder.dataset.replaceUrl);
  }

  // Copy buttons: data-copy names the id of the element whose text is copied.
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

  document.addEventListener('DOMContentLoaded', () => {
    initStageOrder();
    replaceUrl();
  });
})();
