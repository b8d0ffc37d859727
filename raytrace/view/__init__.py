"""``raytrace view``: a live, progressive preview of a scene file in the browser.

- :mod:`.watch`: the files a scene is made of, and polling them for changes;
- :mod:`.orbit`: the preview's camera moves (orbit, dolly) and the camera JSON snippet;
- :mod:`.session`: loading and rendering on a worker thread, restarted on every change;
- :mod:`.server`: the HTTP server on 127.0.0.1 (the page, server-sent events, commands),
  on :mod:`.protocol` (HTTP with deadlines, caps and one-line errors), :mod:`.commands`
  (what a request may say) and :mod:`.savefile` (saves that replace nothing);
- ``static/``: the page and its script; :mod:`.cli`: the command.

See docs/live-preview.md.
"""
