"""A module whose import starts a thread: a run host that imported it can no longer fork."""

import threading
import time

threading.Thread(target=time.sleep, args=(3600,), name="started-by-import", daemon=True).start()
