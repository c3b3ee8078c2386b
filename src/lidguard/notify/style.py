"""The pages' look: one hand-written stylesheet (no framework, no build step) and the theme chooser.

Light and dark follow ``prefers-color-scheme``; the toggle stores an explicit choice in the browser
(``localStorage['lidguard-theme']``) and ``theme.js`` (loaded in the head, before the first paint)
applies it as ``<html data-theme=...>``. Every colour pair used for text keeps WCAG AA contrast (4.5:1,
3:1 for large text) in both themes: tests/notify/test_notify_faces.py measures the computed styles.
"""

from __future__ import annotations

__all__ = ["APP_CSS", "THEME_JS"]

APP_CSS = r"""
:root{--bg:#f6f7f9;--surface:#fff;--text:#15181d;--muted:#4a5261;--border:#d5d9e0;--accent:#1d4ed8;
--accent-text:#fff;--accent-soft:#e7edfd;--danger:#9f1d1d;--danger-soft:#fdeaea;--ok:#14652f;--warn:#7a4b00;
--code:#eef0f4;--shadow:0 1px 2px rgba(16,24,40,.08),0 1px 3px rgba(16,24,40,.06);color-scheme:light}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#0f1216;--surface:#181c22;--text:#e8ebf0;
--muted:#a9b1be;--border:#2c333d;--accent:#8fb0ff;--accent-text:#0b1220;--accent-soft:#1c2740;--danger:#ff9b9b;
--danger-soft:#3a1d1f;--ok:#7fdc9c;--warn:#f5c26b;--code:#11151a;--shadow:none;color-scheme:dark}}
:root[data-theme=dark]{--bg:#0f1216;--surface:#181c22;--text:#e8ebf0;--muted:#a9b1be;--border:#2c333d;
--accent:#8fb0ff;--accent-text:#0b1220;--accent-soft:#1c2740;--danger:#ff9b9b;--danger-soft:#3a1d1f;--ok:#7fdc9c;
--warn:#f5c26b;--code:#11151a;--shadow:none;color-scheme:dark}
*,*::before,*::after{box-sizing:border-box}html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;font-size:1rem;margin:0;
background:var(--bg);color:var(--text);line-height:1.5;overflow-wrap:anywhere}
main{max-width:46rem;margin:0 auto;padding:.5rem 1rem 2rem}
header.top{display:flex;align-items:center;gap:.25rem .75rem;flex-wrap:wrap;max-width:46rem;margin:0 auto;
padding:.5rem 1rem}
header.top .brand{font-weight:700;margin-right:auto;display:inline-flex;align-items:center;min-height:44px;
color:var(--text);text-decoration:none}
header.top nav{display:flex;gap:.25rem;align-items:center;flex-wrap:wrap}
header.top form{margin:0}
a{color:var(--accent)}nav a{display:inline-flex;align-items:center;min-height:44px;padding:0 .5rem;
text-decoration:none;border-radius:.5rem}nav a:hover{background:var(--accent-soft)}
h1{font-size:1.45rem;line-height:1.25;margin:.75rem 0 .5rem}
h2{font-size:1.05rem;margin:1.5rem 0 .5rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card{background:var(--surface);border:1px solid var(--border);border-radius:.9rem;padding:1rem;margin:.75rem 0;
box-shadow:var(--shadow)}
.card h3{font-size:1.1rem;margin:0 0 .25rem;line-height:1.3}
.card .where{color:var(--muted);margin:0 0 .5rem;font-size:.95rem}
.card.event{padding:.75rem 1rem;display:grid;grid-template-columns:1fr auto;gap:.1rem .75rem;align-items:baseline}
.card.event .what{font-weight:600}.card.event .when{color:var(--muted);font-size:.9rem;white-space:nowrap}
.card.event .detail{grid-column:1/-1;color:var(--muted);font-size:.95rem}
.badge{display:inline-block;border-radius:999px;padding:.05rem .6rem;font-size:.85rem;font-weight:600;
background:var(--accent-soft);color:var(--text)}
.badge.bad{background:var(--danger-soft);color:var(--danger)}
.countdown{font-variant-numeric:tabular-nums;font-weight:700;color:var(--warn)}
.message{white-space:pre-wrap;background:var(--code);border-radius:.6rem;padding:.6rem .75rem;margin:.5rem 0;
font-size:.95rem}
.clamp{display:-webkit-box;-webkit-line-clamp:4;line-clamp:4;-webkit-box-orient:vertical;overflow:hidden;
padding-bottom:0;border-bottom:.6rem solid var(--code)}
.clamp.open{display:block;-webkit-line-clamp:unset}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--code);color:var(--text);padding:.6rem .75rem;
margin:0;max-height:45vh;overflow-x:hidden;overflow-y:auto;font-size:.9rem;border-radius:.6rem}
code{background:var(--code);border-radius:.3rem;padding:0 .25rem}
label{display:block;margin:1rem 0 .35rem;font-weight:600}
input,textarea,button{font:inherit;font-size:1rem;color:inherit}
input[type=password],textarea{width:100%;min-height:44px;padding:.6rem .75rem;border:1px solid var(--border);
border-radius:.6rem;background:var(--surface);color:var(--text)}
textarea{display:block;min-height:6rem;resize:vertical;overflow:hidden}
input:focus-visible,textarea:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--accent);
outline-offset:2px}
button,.button{display:inline-flex;align-items:center;justify-content:center;min-height:48px;min-width:48px;
padding:.6rem 1rem;margin:.3rem 0;border-radius:.7rem;border:1px solid var(--border);background:var(--surface);
color:var(--text);font-weight:600;cursor:pointer;text-decoration:none;text-align:center}
button.primary,.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
button.danger{color:var(--danger);border-color:var(--danger)}
button.quiet{min-height:44px;min-width:44px;border-color:transparent;background:transparent;padding:.4rem .6rem}
button.more{min-height:44px;padding:.2rem .6rem;margin:0;border-color:transparent;background:transparent;
color:var(--accent)}
.wide{width:100%}.actions{display:flex;gap:.6rem;flex-wrap:wrap;margin-top:.5rem}
.actions form{flex:1 1 8rem;margin:0}.actions button,.actions .button{width:100%}
.actions>.button,.actions>button{flex:1 1 8rem}
.meta{color:var(--muted);margin:.3rem 0}.error{color:var(--danger);font-weight:600}
.status{font-weight:700}.sent{border-color:var(--ok)}.sent .status-line{color:var(--ok);font-weight:700}
.line{display:flex;align-items:center;gap:.5rem 1rem;flex-wrap:wrap}.line p{margin:0;flex:1 1 12rem}
.empty{color:var(--muted)}
.readiness{font-weight:700;border-left:.4rem solid var(--warn)}.readiness.ok{border-left-color:var(--ok)}
.table{overflow-x:auto}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid var(--border);padding:.4rem;text-align:left;vertical-align:top;font-size:.9rem;
overflow-wrap:normal}th{color:var(--muted)}
[hidden]{display:none!important}
"""

# In the head, before the first paint: an explicit choice wins over prefers-color-scheme.
THEME_JS = r"""'use strict';
(function () {
  try {
    const chosen = localStorage.getItem('lidguard-theme');
    if (chosen === 'light' || chosen === 'dark') { document.documentElement.dataset.theme = chosen; }
  } catch (error) { /* storage blocked: follow the system */ }
})();
"""
