"""`ragsec bench ...`: one module per benchmark command, attack-file loading, planting and speed parts."""
