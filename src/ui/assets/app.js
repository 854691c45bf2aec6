// Behaviour of the sales pages. Loaded as a file (the Content-Security-Policy allows no inline script).
(function () {
  'use strict';

  const csrf = () => document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') || '';

  // Every htmx request carries the session's CSRF token; forms also carry it as a hidden field.
  document.addEventListener('htmx:configRequest', (event) => {
    event.detail.headers['X-CSRF-Token'] = csrf();
  });

  let toastTimer;
  function toast(message, isError) {
    const box = document.getElementById('toast');
    if (!box || !message) return;
    box.textContent = message; // text, never markup
    box.classList.toggle('error', Boolean(isError));
    box.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (box.hidden = true), isError ? 6000 : 3000);
  }
  document.addEventListener('toast', (event) => toast(event.detail && event.detail.value));
  document.addEventListener('htmx:responseError', (event) => {
    const xhr = event.detail.xhr;
    toast((xhr && xhr.responseText && xhr.responseText.length < 300 ? xhr.responseText : '') || 'That did not work. Reload the page and try again.', true);
  });
  document.addEventListener('htmx:sendError', () => toast('The service cannot be reached. Try again.', true));

  // Filters apply as soon as a select changes.
  document.addEventListener('change', (event) => {
    const target = event.target;
    if (target instanceof HTMLSelectElement && target.classList.contains('autosubmit') && target.form) target.form.requestSubmit();
  });

  // Confirm buttons that destroy something (data-confirm): our own dialog-free check, a second click.
  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('[data-confirm]') : null;
    if (!button) return;
    if (button.dataset.armed !== 'true') {
      event.preventDefault();
      event.stopImmediatePropagation();
      button.dataset.armed = 'true';
      button.dataset.label = button.textContent;
      button.textContent = button.dataset.confirm;
      setTimeout(() => {
        button.dataset.armed = 'false';
        button.textContent = button.dataset.label;
      }, 4000);
    }
  }, true);

  // The board: drag a card to another column or a won/lost zone to move the deal.
  function initBoard() {
    const board = document.querySelector('.board-page');
    if (!board || typeof Sortable === 'undefined') return;
    const moveUrl = board.dataset.moveUrl;
    const filters = new URLSearchParams(board.dataset.filters || '');

    async function move(item, stageId, from, oldIndex, lostReason) {
      const body = new URLSearchParams();
      if (lostReason) body.set('lost_reason', lostReason);
      for (const [key, value] of filters) body.set(`board[${key}]`, value);
      body.set('deal_id', item.dataset.dealId);
      body.set('stage_id', stageId);
      item.classList.add('moving');
      let response;
      try {
        response = await fetch(moveUrl, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': csrf(), 'HX-Request': 'true' },
          body,
        });
      } catch {
        response = undefined;
      }
      const text = response ? await response.text() : '';
      if (!response || !response.ok) {
        // Put the card back where it was.
        from.insertBefore(item, from.children[oldIndex] || null);
        item.classList.remove('moving');
        toast(text && text.length < 300 ? text : 'The deal could not be moved.', true);
        return;
      }
      // Sortable leaves inline styles on the card; htmx would copy them onto the new card with setAttribute, which the CSP refuses.
      item.removeAttribute('style');
      htmx.swap(item, text, { swapStyle: 'outerHTML' });
      const trigger = response.headers.get('HX-Trigger');
      if (trigger) toast(JSON.parse(trigger).toast);
    }

    // A card dropped on a lost stage waits for the reason (or a cancel, which puts it back).
    let pendingPutBack = null;
    function askLostReason(event) {
      const form = event.to.parentElement.querySelector('form.lost-reason');
      const input = form.querySelector('input[name=lost_reason]');
      // A second card dropped while the first waits: the first goes back unchanged.
      if (pendingPutBack) pendingPutBack();
      const putBack = () => {
        pendingPutBack = null;
        event.from.insertBefore(event.item, event.from.children[event.oldIndex] || null);
      };
      pendingPutBack = putBack;
      form.hidden = false;
      input.value = '';
      input.focus();
      form.onsubmit = (submit) => {
        submit.preventDefault();
        form.hidden = true;
        pendingPutBack = null;
        move(event.item, event.to.dataset.stageId, event.from, event.oldIndex, input.value.trim());
      };
      form.querySelector('.cancel').onclick = () => {
        form.hidden = true;
        putBack();
      };
    }

    board.querySelectorAll('.cards').forEach((list) => {
      Sortable.create(list, {
        group: 'deals',
        draggable: '.card',
        filter: '.locked',
        preventOnFilter: false,
        sort: false,
        forceFallback: true, // mouse events rather than native drag: the same feel in every browser
        fallbackOnBody: true,
        animation: 120,
        ghostClass: 'ghost',
        onAdd: (event) => {
          if (event.to.dataset.stageType === 'lost') askLostReason(event);
          else move(event.item, event.to.dataset.stageId, event.from, event.oldIndex);
        },
      });
    });
  }

  document.addEventListener('DOMContentLoaded', initBoard);
})();
