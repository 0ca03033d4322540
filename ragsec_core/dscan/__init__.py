"""D-SCAN: attention-collapse features, the linear detector, and its evaluation."""
