// tandem::nn: modules, layers, losses and initialisation.
#pragma once
