"""DP building blocks shared by several papers' algorithms (kept apart from any one paper).

* `domain.public_box`: the public box [lo, hi]^d from settings, with the one check that the data
  lie in it (every sensitivity analysis here assumes it; nothing is clipped silently).
* `initialisation`: initial centres by name (sphere packing of Su et al. §4.1.1, k random data
  points, uniform in the box, k-means++, k-median++) and the seeds of shared initial sets.
* `noisy_average.noisy_avg_centers`: NoisyAVG (Nguyen et al. 2021 Alg. 3 = Nissim et al. 2016
  Alg. 5) per cluster, by parallel composition.
* `one_median.private_one_median`: ε-DP approximate 1-median by objective perturbation
  (Iyengar et al. 2019), used by Cohen-Addad et al. 2022 and the k-median variant of Balcan et
  al. 2017.
"""
