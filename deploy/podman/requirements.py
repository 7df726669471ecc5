"""Print the image's install list from setup.cfg: install_requires and the postgres extra.

The Containerfile installs these in a layer of their own, so a change to Herald's code
rebuilds only the small layer that installs Herald itself.
"""

import configparser
import sys

config = configparser.ConfigParser()
config.read(sys.argv[1])
lines = config["options"]["install_requires"] + config["options.extras_require"]["postgres"]
print("\n".join(line.strip() for line in lines.splitlines() if line.strip()))
