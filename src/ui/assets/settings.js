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

  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(
      () => toast('Copied'),
      () => toast('Copy did not work: select the text and copy it by hand.', true),
    );
  });

  document.addEventListener('DOMContentLoaded', () => {
    initStageOrder();
    replaceUrl();
  });
})();
