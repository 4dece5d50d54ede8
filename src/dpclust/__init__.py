"""dpclust: differentially private k-means / k-median, reproduced."""
__version__ = "0.1.0"
