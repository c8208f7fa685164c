"""The worlds the kit ships, one package each; the agent takes everything it needs from the one it is
given (``ralph_mini/world.py`` is the contract). Import the one you want:

- ``orders``: the order desk of notebook 01 (one request type, a cache, a database, a lagging provider);
- ``shop``: the wider shop of notebook 09 (five request types, two that write, a world that changes);
- ``clinic``: a clinic's front desk (appointments, an insurer that lags, a write), the third world.

Left out on purpose: a registry. A world is a package you import and pass along.
"""
