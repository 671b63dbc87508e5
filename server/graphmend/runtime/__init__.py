"""Runtime confirmation: run real TorchDynamo on a sample input (worker.py is standalone)."""
